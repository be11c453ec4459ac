"""A chip highlights the cited passage, not its page: a passage that is one chunk in the middle
of a long page is highlighted character for character, in the text viewer and on the PDF."""

from __future__ import annotations

from tests.helpers import write
from tests.ui.conftest import wait_idle
from tests.ui.pdfmaker import make_pdf
from tests.ui.test_mainwindow import indexed_paths

TOPICS = ["harbours", "tides", "lanterns", "charts", "rope", "storms", "gulls", "anchors", "bells", "reefs"]


def long_page_lines() -> list[str]:
    """About 90 short lines on one page, each naming its number: several 200-token chunks."""
    return [f"Line {i} of the keeper's log is about {TOPICS[i % len(TOPICS)]} and the watch kept that night."
            for i in range(90)]


def middle_chunk(w, path):
    store = w.workers.engine.parts.store
    rows = store.db.execute(
        "SELECT chunk_id, page, start, end, text FROM chunks WHERE file_id=(SELECT file_id FROM files WHERE path=?) "
        "ORDER BY page, start", (str(path.resolve()),)).fetchall()
    assert len(rows) >= 3, "the page must hold several chunks for this test to mean anything"
    return rows[len(rows) // 2]


def show(qtbot, w, path, row):
    chunk_id, page, start, end, text = row
    w.show_source({"path": str(path.resolve()), "page": page, "start": start, "end": end, "chunk_id": chunk_id,
                   "content": text, "title": path.name, "ordinal": 1})


def words(text: str) -> str:
    return " ".join(text.split())


def test_text_viewer_highlights_exactly_the_cited_chunk(qtbot, make_window, tmp_path):
    doc = write(tmp_path / "docs" / "log.md", "# The keeper's log\n\n" + "\n".join(long_page_lines()) + "\n")
    w = make_window()
    w.add_paths([str(doc.parent)])
    qtbot.waitUntil(lambda: len(indexed_paths(w)) == 1, timeout=30000)
    wait_idle(qtbot, w)
    row = middle_chunk(w, doc)
    show(qtbot, w, doc, row)
    view = w.sources.viewer.text_view
    qtbot.waitUntil(lambda: w.sources.viewer.current_kind() == "text" and view.highlighted_text() != "", timeout=20000)
    assert words(view.highlighted_text()) == words(row[4])
    assert len(words(view.highlighted_text())) < len(words(view.toPlainText())) / 2


def test_pdf_outline_covers_exactly_the_cited_chunk(qtbot, make_window, tmp_path):
    doc = make_pdf(tmp_path / "pdfs" / "log.pdf", [long_page_lines()], title="The keeper's log")
    w = make_window()
    w.add_paths([str(doc.parent)])
    qtbot.waitUntil(lambda: len(indexed_paths(w)) == 1, timeout=30000)
    wait_idle(qtbot, w)
    row = middle_chunk(w, doc)
    show(qtbot, w, doc, row)
    pdf = w.sources.viewer.pdf_view
    qtbot.waitUntil(lambda: w.sources.viewer.current_kind() == "pdf" and pdf.passage_span is not None, timeout=20000)
    a, b = pdf.passage_span
    page_index = row[1] - 1
    outlined = pdf.document.getSelectionAtIndex(page_index, a, b - a).text()
    page_text = pdf.document.getAllText(page_index).text()
    assert words(outlined) == words(row[4])
    assert len(words(outlined)) < len(words(page_text)) / 2
    rects = pdf.view.highlight_rects()
    assert rects and len(rects) < 45  # some lines of the page, not all 90 of them
