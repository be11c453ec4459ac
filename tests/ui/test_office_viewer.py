"""Office files in the window: the drop zone says they are read, and a citation of a spreadsheet,
slide or RTF passage opens the file's text with the passage highlighted."""

from __future__ import annotations

from pathlib import Path

from edgechat.core.documents import parse_document
from tests.core.test_office_formats import make_pptx, make_rtf, make_xlsx
from tests.ui.conftest import wait_idle
from tests.ui.test_mainwindow import ask, click_chip, indexed_paths


def test_drop_zone_lists_the_office_formats(make_window):
    w = make_window()
    text = w.chat.drop_hint.body.text()
    for name in ("PDF", "Word", "PowerPoint", "Excel", "CSV", "OpenDocument", "RTF", "EPUB", "Markdown"):
        assert name in text


def test_a_cited_cell_opens_highlighted_in_the_sheet_text(qtbot, make_window, tmp_path):
    docs = tmp_path / "office"
    docs.mkdir()
    make_xlsx(docs / "revenue.xlsx")
    make_pptx(docs / "review.pptx")
    make_rtf(docs / "harbour.rtf")
    w = make_window()
    w.add_paths([str(docs)])
    qtbot.waitUntil(lambda: len(indexed_paths(w)) == 3, timeout=60000)
    wait_idle(qtbot, w)
    for question, name, expected in [
        ("What was the revenue of the North region in 2023?", "revenue.xlsx", "2023: 1234"),
        ("How many widgets were sold?", "review.pptx", "Units sold: 75"),
    ]:
        turn = ask(qtbot, w, question)
        store = w.workers.engine.parts.store

        def text_of(s: dict) -> str:
            return store.chunk_rows([s["chunk_id"]])[s["chunk_id"]].text

        src = next(s for s in turn.sources if Path(s["path"]).name == name and expected in text_of(s))
        chunk = text_of(src)
        last = len(w.controller.turns) - 1
        if src["ordinal"] in w.chat.transcript.chip_numbers(last):
            click_chip(qtbot, w, last, src["ordinal"])
        else:  # a source the answer did not cite: picked in the source list
            w.sources.select_number(src["ordinal"])
        viewer = w.sources.viewer
        qtbot.waitUntil(lambda: viewer.current_kind() == "text" and viewer.path == src["path"]
                        and viewer.text_view.highlighted_text() != "", timeout=10000)
        doc = parse_document(src["path"])
        assert viewer.text_view.toPlainText() == "\n\n".join(p.text for p in doc.pages)
        shown = viewer.text_view.highlighted_text()
        assert shown.strip() and shown in chunk
        a, b = viewer.text_view.passage_span
        base = sum(len(p.text) + 2 for p in doc.pages[: src["page"] - 1])
        page_text = doc.pages[src["page"] - 1].text
        assert page_text[a - base:b - base] == shown
        assert not viewer.message.isVisible()
