"""The transcript: chips for accepted markers only, the cited sentences highlighted on a click,
tooltips, and copying that gives the markers back."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication

from edgechat.core.conversations import Turn
from edgechat.ui.answer_layout import OBJECT_CHAR
from edgechat.ui.transcript import TranscriptView

ANSWER = "Venus is hot. [1] Mars is red [2] and cold [1, 7]. Pluto is far [9].\nJupiter is big. [3][2]"


def _turn() -> Turn:
    def src(n: int, title: str) -> dict:
        return {"ordinal": n, "title": title, "path": f"/docs/{n}.md", "page": n, "start": 0, "end": 10,
                "snippet": f"snippet {n}", "score": 0.5, "metadata": {}}

    cites = [{"number": n, "title": f"T{n}", "path": f"/docs/{n}.md", "file_id": "", "page": n,
              "snippet": f"snippet {n}", "start": 0, "end": 10, "spans": []} for n in (1, 2, 3)]
    return Turn("Tell me about planets", ANSWER, citations=cites, sources=[src(1, "One"), src(2, "Two"),
                                                                           src(3, "Three")], grounded=True)


def test_chips_only_for_accepted_markers(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    view.set_turns([_turn()])
    assert view.chip_numbers(0) == [1, 2, 1, 3, 2]
    plain = view.toPlainText()
    assert "[9]" in plain  # names no source: plain text
    assert "[7]" in plain  # rejected number inside a group stays plain
    assert "[1]" not in plain and "[2]" not in plain and "[3]" not in plain
    assert plain.count(OBJECT_CHAR) == 5


def test_clicking_a_chip_highlights_the_sentences_citing_it(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    view.set_turns([_turn()])
    qtbot.waitExposed(view)
    rect = view.chip_rect(0, 2)
    assert rect is not None and rect.width() > 0
    with qtbot.waitSignal(view.sig_chip_clicked) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [0, 2]
    texts = view.highlighted_texts()
    # The sentences citing [2], as the answer has them, chips standing where markers were.
    assert texts == [f"Mars is red {OBJECT_CHAR} and cold {OBJECT_CHAR}[7].",
                     f"Jupiter is big. {OBJECT_CHAR}{OBJECT_CHAR}"]
    assert view.active_chip == (0, 2)
    view.highlight(0, None)
    assert view.highlighted_texts() == []


def test_tooltip_and_copy(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.set_turns([_turn()])
    tip = view.chip_tooltip(0, 3)
    assert "[3] Three" in tip and "page 3" in tip and "snippet 3" in tip
    view.selectAll()
    view.copy()
    text = QGuiApplication.clipboard().text()
    assert "Mars is red [2] and cold [1][7]." in text
    assert "Jupiter is big. [3][2]" in text


def test_streaming_is_plain_then_chips_and_notes(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    live = Turn("q", "Partial [1]", stop_reason="streaming")
    view.set_turns([live], live=0)
    view.append_to_live(" more [2]")
    assert view.toPlainText().endswith("Partial [1] more [2]")
    assert view.chip_numbers(0) == []
    nothing = Turn("q", "Nothing matched.", grounded=False)
    skipped = Turn("hi", "Hello!", grounded=False, search_skipped=True)
    view.set_turns([nothing, skipped])
    plain = view.toPlainText()
    assert "No sources: nothing in your library matched this question." in plain
    assert "Not from your documents: no search was needed" in plain


def test_anchor_at_chip_is_a_cite_link(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    view.set_turns([_turn()])
    qtbot.waitExposed(view)
    rect = view.chip_rect(0, 3)
    assert view.anchorAt(rect.center()) == "cite:0:3:0"  # turn 0, source 3, its first [3]
    assert view.anchorAt(QPoint(2, 2)) == ""


def test_a_chip_link_names_which_marker_was_clicked():
    from edgechat.ui.transcript import parse_chip, parse_cite

    assert parse_chip("cite:2:5:1") == (2, 5, 1)
    assert parse_chip("cite:2:5") == (2, 5, 0)  # links saved before occurrences were named
    assert parse_cite("cite:2:5:1") == (2, 5)
    assert parse_chip("cite:x:5") is None and parse_chip("found:1") is None


def test_copy_answer_puts_the_answer_with_its_sources_on_the_clipboard(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    view.set_turns([_turn()])
    assert "Copy answer" in view.toPlainText()
    with qtbot.waitSignal(view.sig_copied) as blocker:
        from PySide6.QtCore import QUrl

        view._on_anchor(QUrl("copy:0"))  # the link's target, as a click on it gives it
    assert blocker.args == [0]
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("Venus is hot. [1] Mars is red [2]")
    assert "**Sources**" in copied and "[1] **One**, page 1" in copied and "[3] **Three**, page 3" in copied
    assert view.copy_answer(5) == ""  # no such answer: nothing copied
