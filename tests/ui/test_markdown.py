"""Answers written in Markdown: the parser keeps every visible character's place in the answer,
and the transcript lays out lists, code blocks, tables and emphasis with the chips inline."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QTextCursor

from edgechat.core.conversations import Turn
from edgechat.ui import markdown
from edgechat.ui.answer_layout import OBJECT_CHAR
from edgechat.ui.transcript import TranscriptView


def _visible(text: str, runs: list[markdown.Run]) -> str:
    return "".join(text[r.start:r.end] for r in runs)


def test_parser_drops_markup_and_keeps_offsets():
    text = ("## Steps\nRun **the tool [1]** with *care*, not \\*this\\*; `a_b[2]` stays code.\n"
            "- one\n  - nested two\n3. third\n\n> said so\n---\nsnake_case_name and 2*3*4")
    blocks = markdown.parse(text)
    assert [b.kind for b in blocks] == ["heading", "para", "bullet", "bullet", "ordered", "quote", "rule", "para"]
    heading, para, one, two, third, quote, _, last = blocks
    assert heading.level == 2 and _visible(text, heading.runs) == "Steps"
    assert _visible(text, para.runs) == "Run the tool [1] with care, not *this*; a_b[2] stays code."
    styles = {text[r.start:r.end]: r.style for r in para.runs}
    assert styles["the tool [1]"] == markdown.BOLD and styles["care"] == markdown.ITALIC
    assert styles["a_b[2]"] == markdown.CODE
    assert (one.level, two.level, third.number) == (0, 1, 3)
    assert quote.gap and _visible(text, quote.runs) == "said so"
    assert _visible(text, last.runs) == "snake_case_name and 2*3*4"  # no emphasis inside words


def test_parser_reads_tables_and_fences_even_unclosed():
    text = "| Item | Value |\n|:--|--:|\n| **a** | `x|y` |\n| b |\nafter\n```sh\nls -l\n  cd ..\n"
    table, after, code = markdown.parse(text)
    assert table.kind == "table" and len(table.cells) == 3
    assert [[_visible(text, c) for c in row] for row in table.cells] == [
        ["Item", "Value"], ["a", "x|y"], ["b", ""]]  # a short row is padded
    assert after.kind == "para"
    assert code.kind == "code" and code.code_text(text) == "ls -l\n  cd ..\n"  # still streaming: runs to the end


ANSWER = """To install it:

1. Download the package [1].
2. Run the installer:

```
setup --quiet
```

| Option | Meaning |
|---|---|
| `--quiet` | no questions [2] |
| **--help** | lists options [1] |

- It needs **admin rights** [2].
- Restart afterwards [3]."""


def _turn(answer: str = ANSWER) -> Turn:
    def src(n: int) -> dict:
        return {"ordinal": n, "title": f"Doc {n}", "path": f"/docs/{n}.pdf", "page": n, "start": 0, "end": 10,
                "snippet": f"snippet {n}", "score": 0.5, "metadata": {}}

    cites = [{"number": n, "title": f"Doc {n}", "path": f"/docs/{n}.pdf", "file_id": "", "page": n,
              "snippet": f"snippet {n}", "start": 0, "end": 10, "spans": []} for n in (1, 2)]
    return Turn("How do I install it?", answer, citations=cites, sources=[src(1), src(2)], grounded=True)


def _view(qtbot) -> TranscriptView:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    return view


def _blocks(view: TranscriptView):
    block = view.document().begin()
    while block.isValid():
        yield block
        block = block.next()


def test_a_list_a_code_block_and_a_table_survive_with_chips(qtbot):
    view = _view(qtbot)
    view.set_turns([_turn()])
    plain = view.toPlainText()
    assert "**" not in plain and "```" not in plain and "|---" not in plain and "`--quiet`" not in plain
    assert view.chip_numbers(0) == [1, 2, 1, 2]  # [3] names no source: plain text
    assert "Restart afterwards [3]." in plain
    # The numbered and the bulleted list are lists, with their items' text and chips.
    items = {b.text(): b.textList() for b in _blocks(view) if b.textList() is not None}
    assert set(items) == {f"Download the package {OBJECT_CHAR}.", "Run the installer:",
                          f"It needs admin rights {OBJECT_CHAR}.", "Restart afterwards [3]."}
    numbered = items["Run the installer:"]
    assert numbered.count() == 2 and numbered.itemText(numbered.item(1)) == "2."
    assert items["Restart afterwards [3]."].count() == 2 and items["Restart afterwards [3]."] is not numbered
    # The code block: its line in a fixed-pitch font, and a Copy link that copies it.
    code_block = next(b for b in _blocks(view) if b.text() == "setup --quiet")
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    assert code_block.begin().fragment().charFormat().fontFamilies() == [mono]
    assert view.code_blocks(0) == ["setup --quiet"]
    with qtbot.waitSignal(view.sig_code_copied):
        view._on_anchor(QUrl("code:0:0"))
    assert QGuiApplication.clipboard().text() == "setup --quiet"
    # The table: 3 rows of 2 cells, header bold, chips inside cells.
    cursor = QTextCursor(view.document())
    tables = []
    while not cursor.atEnd():
        if cursor.currentTable() is not None and cursor.currentTable() not in tables:
            tables.append(cursor.currentTable())
        cursor.movePosition(QTextCursor.MoveOperation.NextCharacter)
    assert len(tables) == 1
    table = tables[0]
    assert (table.rows(), table.columns()) == (3, 2)

    def cell_text(r: int, c: int) -> str:
        cell = table.cellAt(r, c)
        cur = cell.firstCursorPosition()
        cur.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
        return cur.selectedText()

    assert [cell_text(0, 0), cell_text(1, 0), cell_text(1, 1), cell_text(2, 0)] == [
        "Option", "--quiet", f"no questions {OBJECT_CHAR}", "--help"]
    assert table.cellAt(0, 0).firstCursorPosition().charFormat().fontWeight() == QFont.Weight.Bold


def test_a_chip_in_a_list_item_highlights_its_sentence(qtbot):
    view = _view(qtbot)
    view.set_turns([_turn()])
    view.highlight(0, 2)
    # The sentences citing [2], as laid out: markup gone, chips where the markers were (a
    # table row is one sentence: its cells' text, read across).
    assert view.highlighted_texts() == [f"--quietno questions {OBJECT_CHAR}", f"It needs admin rights {OBJECT_CHAR}."]
    view.highlight(0, 1)
    assert f"Download the package {OBJECT_CHAR}." in view.highlighted_texts()


def test_chips_are_drawn_while_the_answer_streams_once_its_sources_are_known(qtbot):
    view = _view(qtbot)
    live = _turn("Download it [1] and run it [2]. See [9].")
    live.citations = []  # not built yet: the answer is still streaming
    view.set_turns([live], live=0)
    assert view.chip_numbers(0) == [1, 2]  # [9] names no source: plain text
    assert "See [9]." in view.toPlainText()
    view.append_to_live(" Then restart [1].")
    assert view.chip_numbers(0) == [1, 2, 1]
    assert "Doc 1" in view.chip_tooltip(0, 1)


def test_markdown_takes_shape_while_the_answer_streams(qtbot):
    view = _view(qtbot)
    live = Turn("q", "Steps:\n- first [1]", stop_reason="streaming")
    view.set_turns([live], live=0)
    assert "- first" not in view.toPlainText()  # already a list item
    view.append_to_live("\n- second\n\n```\nmake")
    assert view.code_blocks(0) == ["make"]  # an unclosed fence is code as it streams
    view.append_to_live(" all\n```\nDone **now**.")
    plain = view.toPlainText()
    assert "Done now." in plain and "```" not in plain and "[1]" in plain  # no chips while streaming
    assert view.code_blocks(0) == ["make all"]
    assert sum(1 for b in _blocks(view) if b.textList() is not None) == 2
    assert view.chip_numbers(0) == []
