"""The window shows what the check found: only checked sentences, a note when some were left out,
chips of supporting sources only, and a chip EdgeChat added told apart from one the writer put."""

from __future__ import annotations

from tests.helpers import make_corpus
from tests.ui.conftest import ScriptedClient, wait_idle
from tests.ui.test_mainwindow import ask, indexed_paths


class MixedClient(ScriptedClient):
    """Two sentences of the astronomy page, the first cited, the second not, then one sentence
    that no document says."""

    TEXT = ("A year on Mercury lasts 88 Earth days [1]. Jupiter is the largest planet. "
            "The probe Stardust landed on Venus long ago.")


def answered(qtbot, make_window, tmp_path, client=None,
             question="How long is a year on Mercury, and which planet is the largest?"):
    """A window over the sample corpus whose first answer is `client`'s (MixedClient's)."""
    docs = make_corpus(tmp_path / "docs")
    w = make_window(client=client or MixedClient(delay=0.0))
    w.add_paths([str(docs)])
    qtbot.waitUntil(lambda: len(indexed_paths(w)) == 3, timeout=30000)
    wait_idle(qtbot, w)
    return w, ask(qtbot, w, question)


def test_only_checked_sentences_are_shown_and_added_chips_are_told_apart(qtbot, make_window, tmp_path):
    w, turn = answered(qtbot, make_window, tmp_path)
    view = w.chat.transcript
    assert not turn.abstained, turn.answer
    assert "Stardust" not in turn.answer and "Stardust" in turn.draft  # left out, kept in the draft
    assert "Jupiter is the largest planet" in turn.answer
    assert view.unsupported_texts(0) == []
    assert "left out" in view.toPlainText()
    added = [c for c in turn.citations if c.get("added")]
    written = [c for c in turn.citations if not c.get("added")]
    assert written, "the writer's [1] is kept"
    for c in added:
        assert "Added by EdgeChat" in view.chip_tooltip(0, int(c["number"]))
    for c in written:
        assert "Added by EdgeChat" not in view.chip_tooltip(0, int(c["number"]))
    w.grab().save(str(tmp_path / "verdicts.png"))


def test_a_chip_shows_the_source_sentence_that_supports_the_answer(qtbot, make_window, tmp_path):
    w, turn = answered(qtbot, make_window, tmp_path)
    number = next(int(c["number"]) for c in turn.citations if not c.get("added"))
    w.follow_citation(0, number)
    view = w.sources.viewer.text_view
    qtbot.waitUntil(lambda: w.sources.viewer.current_kind() == "text" and view.highlighted_text() != "", timeout=20000)
    shown = " ".join(view.highlighted_text().split())
    assert "88 Earth days" in shown  # the supporting sentence ...
    assert "Jupiter" not in shown and "Venus" not in shown  # ... not the whole passage


def test_each_chip_shows_the_sentence_behind_its_own_marker(qtbot, make_window, tmp_path):
    from PySide6.QtCore import QUrl

    w, turn = answered(qtbot, make_window, tmp_path)
    number = next(int(c["number"]) for c in turn.citations if not c.get("added"))
    if w.chat.transcript.chip_numbers(0).count(number) < 2:
        raise AssertionError(f"expected [{number}] twice (written and added): {turn.answer!r}")
    view = w.sources.viewer.text_view
    w.chat.transcript._on_anchor(QUrl(f"cite:0:{number}:1"))  # the second [n]: after the Jupiter sentence
    qtbot.waitUntil(lambda: "Jupiter" in view.highlighted_text(), timeout=20000)
    assert "88 Earth days" not in view.highlighted_text()


class BareNoClient(ScriptedClient):
    """A writer that answers only "No", citing the first source."""

    TEXT = "No [1]."


def test_a_bare_no_is_shown_as_the_passages_with_a_note_that_says_why(qtbot, make_window, tmp_path):
    w, turn = answered(qtbot, make_window, tmp_path, client=BareNoClient(delay=0.0),
                       question="Does a year on Mercury last longer than 100 Earth days?")
    assert turn.answer.startswith("Your documents say:") and "88 Earth days" in turn.answer
    assert not turn.abstained and turn.citations and turn.draft == "No [1]."
    shown = w.chat.transcript.toPlainText()
    assert "only yes or no" in shown and "Show the model's unverified answer" in shown


def test_the_note_under_an_answer_does_not_repeat_what_the_answer_says():
    from types import SimpleNamespace

    from edgechat.ui.transcript import no_source_note

    base = dict(stop_reason="eos", search_skipped=False, sources=[{"n": 1}], citations=[], verdicts=[], grounded=False)
    not_found = SimpleNamespace(**base, abstained=True, draft="", answer="Your documents don't say: ...")
    declined = SimpleNamespace(**base, abstained=True, draft="I do not know.", answer="Your documents don't say: ...")
    quoted = SimpleNamespace(**base, abstained=False, draft="No [1].", answer="Your documents say:\nX [1]")
    trimmed = SimpleNamespace(**base, abstained=False, draft="Mercury is small. It has rings.", answer="Mercury is small [1].")
    assert no_source_note(not_found) == no_source_note(declined) == ""  # the answer itself says so
    assert "only yes or no" in no_source_note(quoted)
    assert "left out" in no_source_note(trimmed)


class WrongMarkerClient(ScriptedClient):
    """A supported sentence cited to every source the answer could have: all but the astronomy
    page's markers are wrong."""

    TEXT = "A year on Mercury lasts 88 Earth days [1][2][3]."


def test_a_written_chip_whose_source_does_not_say_the_sentence_is_taken_out(qtbot, make_window, tmp_path):
    w, turn = answered(qtbot, make_window, tmp_path, WrongMarkerClient(delay=0.0), "How long is a year on Mercury?")
    view = w.chat.transcript

    def passage(s: dict) -> str:  # the source's passage, read from its file (text files: one page)
        return open(s["path"], encoding="utf-8").read()[int(s["start"]):int(s["end"])]

    says = {int(s["ordinal"]): "88 Earth days" in passage(s) for s in turn.sources}
    numbers = view.chip_numbers(0)
    assert numbers and all(says.get(n) for n in numbers), (turn.answer, says)
    assert [v for v in turn.sentence_verdicts if v.wrong_markers], turn.sentence_verdicts
    w.grab().save(str(tmp_path / "wrong-chip.png"))
