"""A PDF indexed with PDFium has QtPdf's own character offsets: the viewer takes the indexed span
as it is (no alignment), checked on real PDFs built here and read by both."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtPdf import QPdfDocument

from edgechat.core.documents import parse_document
from edgechat.ui.align import exact_span, indexed_form, utf16_index
from edgechat.ui.workers import DocumentWorker
from tests.helpers import make_pdf

LINES = [f"Line {i} of the keeper's log: the lamp was trimmed at {i} bells and the tide was {i % 3} feet."
         for i in range(30)]


def test_indexed_form_keeps_every_offset() -> None:
    raw = "a\r\nb\rc\x02d\ufffee"
    assert indexed_form(raw) == "a \nb\nc d-e" and len(indexed_form(raw)) == len(raw)


def test_exact_span_only_when_the_text_is_there() -> None:
    page = "one\r\ntwo three"
    assert exact_span(page, "two", 5, 8) == (5, 8)
    assert exact_span(page, "one \ntwo", 0, 8) == (0, 8)
    assert exact_span(page, "two", 4, 7) is None  # offsets from another extraction
    assert exact_span(page, "two", 5, 9) is None
    assert exact_span(page, "", 0, 0) is None


def test_utf16_index_counts_astral_characters_twice() -> None:
    text = "a\U0001d400b"
    assert utf16_index(text, 1) == 1 and utf16_index(text, 2) == 3 and utf16_index(text, 3) == 4


def test_pdfium_offsets_are_qtpdf_offsets(qapp, tmp_path: Path) -> None:
    path = tmp_path / "log.pdf"
    path.write_bytes(make_pdf(["\n".join(LINES), "\n".join(reversed(LINES))]))
    pages = parse_document(path).pages
    doc = QPdfDocument()
    assert doc.load(str(path)) == QPdfDocument.Error.None_
    try:
        for index, page in enumerate(pages):
            viewer = doc.getAllText(index).text()
            assert indexed_form(viewer) == page.text  # the whole page, character for character
            start = page.text.index(LINES[17])
            end = start + len(LINES[17])
            assert exact_span(viewer, page.text[start:end], start, end) == (start, end)
            assert doc.getSelectionAtIndex(index, start, end - start).text().strip() == LINES[17]
    finally:
        doc.close()


def test_viewer_places_a_pdfium_passage_without_alignment(qapp, tmp_path: Path) -> None:
    path = tmp_path / "log.pdf"
    path.write_bytes(make_pdf(["\n".join(LINES)]))
    page = parse_document(path).pages[0]
    start = page.text.index(LINES[5])
    end = page.text.index(LINES[8]) + len(LINES[8])
    worker = DocumentWorker(None)  # type: ignore[arg-type]  # placing needs no host
    placed = worker._place_in_pdf(str(path), None, 1, page.text[start:end], start, end)
    assert placed is not None and placed.exact and placed.span == (start, end)
    assert placed.polygons and placed.selected_text.split() == page.text[start:end].split()
    # a passage from another extraction (offsets that do not hold it) is still aligned
    moved = worker._place_in_pdf(str(path), None, 1, LINES[8], 0, len(LINES[8]))
    assert moved is not None and not moved.exact and moved.span is not None
