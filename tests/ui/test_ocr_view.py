"""A citation on a scanned page (read by OCR at indexing) is highlighted in the PDF viewer by the
boxes of its words, from the index: QtPdf shows the page image and has no text to place it in."""

from __future__ import annotations

import pytest

from edgechat.core.engine import READ_BY_OCR
from tests import scans
from tests.ui.conftest import wait_idle
from tests.ui.test_mainwindow import indexed_paths

PAGES = [
    "The lighthouse keeper counted seventeen ships\nbefore the storm reached the harbour.",
    "Elephants remember the river crossings\nthat their grandmothers showed them.\n\n"
    "The herd walked north along the dry valley\nuntil the rains returned in November.",
]
TOL = 4.0  # points


@pytest.fixture
def scan_path(tmp_path):
    from edgechat.core.documents import ocr

    assert not ocr.available(), ocr.available()  # a required dependency: fail, never skip
    data, drawn = scans.make_scan(PAGES)
    path = tmp_path / "scans" / "herd.pdf"
    path.parent.mkdir()
    path.write_bytes(data)
    return path, drawn


def test_a_citation_on_a_scanned_page_is_boxed_where_its_words_are(qtbot, make_window, scan_path):
    path, drawn = scan_path
    w = make_window()
    w.add_paths([str(path.parent)])
    qtbot.waitUntil(lambda: len(indexed_paths(w)) == 1, timeout=60000)
    wait_idle(qtbot, w)
    (f,) = w.workers.engine.files()
    assert READ_BY_OCR in f.detail
    store = w.workers.engine.parts.store
    chunk_id, page, start, end, text = store.db.execute(
        "SELECT chunk_id, page, start, end, text FROM chunks WHERE text LIKE '%river crossings%'").fetchone()
    assert page == 2
    a = text.index("river crossings")
    focus = (a, a + len("river crossings that their grandmothers"))  # over a line end
    w.show_source({"path": str(path.resolve()), "page": page, "start": start, "end": end, "chunk_id": chunk_id,
                   "content": text, "title": path.name, "ordinal": 1, "focus": focus})
    pdf = w.sources.viewer.pdf_view
    qtbot.waitUntil(lambda: w.sources.viewer.current_kind() == "pdf" and pdf.passage_span is not None,
                    timeout=20000)
    view = pdf.view
    assert view.highlight_page == 1
    boxes = [poly.boundingRect() for poly in view.highlight_polygons]
    assert len(boxes) == 2  # one box per line of the cited words
    first = [d for d in drawn if d.page == 2 and d.text in ("river", "crossings")]
    second = [d for d in drawn if d.page == 2 and d.text in ("that", "their", "grandmothers")
              and d.top > first[0].bottom]
    for box, words in zip(boxes, (first, second)):
        assert abs(box.left() - min(d.left for d in words)) <= TOL
        assert abs(box.right() - max(d.right for d in words)) <= TOL
        assert abs(box.top() - min(d.top for d in words)) <= TOL
        assert abs(box.bottom() - max(d.bottom for d in words)) <= TOL
    qtbot.wait(300)  # the scroll to the highlight
    rects = view.highlight_rects()
    page_rect = view.page_rect(1)
    assert len(rects) == 2 and all(page_rect.contains(r) for r in rects)
    # the rectangles drawn over the page image cover the words' ink
    image = view.viewport().grab().toImage()
    for r in rects:
        dark = sum(1 for x in range(int(r.left()) + 1, int(r.right()) - 1, 2)
                   for y in range(int(r.top()) + 1, int(r.bottom()) - 1, 2)
                   if 0 <= x < image.width() and 0 <= y < image.height() and image.pixelColor(x, y).lightness() < 110)
        assert dark > 5, r
    w.sources.viewer.grab().save("/tmp/edgechat_ocr_highlight.png")
