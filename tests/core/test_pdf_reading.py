"""Reading PDFs: PDFium first, pypdf's raised limits, salvage of files cut short, and other
formats named .pdf. Every file is built here (by hand, or with pypdf and python-docx)."""

from __future__ import annotations

import io
import threading
import zlib
from pathlib import Path

import docx
import pypdf
import pytest

from edgechat.core.documents import parse_document
from edgechat.core.documents import pdf as pdfmod
from edgechat.core.documents.pdf import PYPDF_LIMITS, _read_pypdf, sniff
from edgechat.core.documents.pdf_repair import rebuild_pdf
from edgechat.core.records import DocumentError, Problem
from tests.helpers import make_pdf

PAGES = [
    "Alpha page one talks about lighthouses\nand the keepers who lived in them.",
    "Beta page two covers tides (spring and neap) and the moon.",
    "Gamma page three ends the story of the coast.",
]


def build_pdf(bodies: list[bytes], root: int, *, header: bytes = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n") -> bytes:
    """Objects 1..n (bodies, in order) with a correct cross-reference table."""
    out = io.BytesIO()
    out.write(header)
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(bodies) + 1, root, xref))
    return out.getvalue()


def content(text: str) -> bytes:
    ops = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % text.encode("cp1252")
    return b"<< /Length %d >>\nstream\n" % len(ops) + ops + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def page_dict(contents: int, font: int = 1, parent: int = 99, extra: bytes = b"") -> bytes:
    return (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >>%s >>" % (parent, contents, font, extra))


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def problem(path: Path) -> DocumentError:
    with pytest.raises(DocumentError) as info:
        parse_document(path)
    return info.value


# --------------------------------------------------------------------------- PDFium first


def test_pdfium_reads_pages_metadata_and_line_ends(tmp_path: Path) -> None:
    path = write(tmp_path, "coast.pdf", make_pdf(PAGES, info={"Title": "Lighthouses", "Author": "Ada"}))
    doc = parse_document(path)
    assert doc.metadata["parser"] == "pdfium"
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert doc.pages[0].text == "Alpha page one talks about lighthouses \nand the keepers who lived in them."
    assert "\r" not in "".join(p.text for p in doc.pages)
    assert doc.title == "Lighthouses" and doc.metadata["author"] == "Ada"


def test_pdfium_text_replacements_keep_every_offset() -> None:
    raw = "a\r\nb\rc\x02d\ufffee\x00f\x88g\x7fh\u00a0i"
    clean = pdfmod.indexed_pdfium_text(raw)
    assert len(clean) == len(raw)
    assert clean == "a \nb\nc d-e f g h\u00a0i"  # C0 and C1 controls are spaces; a no-break space stays


def test_pdf_with_junk_before_the_header_is_read(tmp_path: Path) -> None:
    data = make_pdf(PAGES)
    path = write(tmp_path, "mail-saved.pdf", b"Content-Type: application/pdf\r\n\r\n" + data)
    assert "Gamma" in parse_document(path).pages[2].text


def test_parsing_from_threads_at_once_gives_the_same_pages(tmp_path: Path) -> None:
    path = write(tmp_path, "coast.pdf", make_pdf(PAGES * 5))
    expected = [p.text for p in parse_document(path).pages]
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                results.append([p.text for p in parse_document(path).pages])
        except BaseException as exc:  # noqa: BLE001 - any failure of a thread is reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 20 and all(r == expected for r in results)


# --------------------------------------------------------------------------- pypdf limits


def _pdf_with_big_array(n: int) -> bytes:
    big = b"[" + b" ".join([b"0"] * n) + b"]"
    # the big array sits in the page dictionary, as a filing's structure arrays do in its tree
    return build_pdf([FONT, content(PAGES[0]), page_dict(2, parent=4, extra=b" /PieceInfo " + big),
                      b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", b"<< /Type /Catalog /Pages 4 0 R >>"], root=5)


def test_array_over_pypdf_default_limit_is_read(tmp_path: Path) -> None:
    data = _pdf_with_big_array(150_000)
    path = write(tmp_path, "filing.pdf", data)
    with pytest.raises(Exception, match="maximum array element count"):  # pypdf's defaults refuse it
        reader = pypdf.PdfReader(io.BytesIO(data))
        reader.pages[0].extract_text()
    assert "lighthouses" in parse_document(path).pages[0].text
    doc = _read_pypdf(path, data, None)  # the fallback reads it too
    assert "lighthouses" in doc.pages[0].text and doc.metadata["parser"] == "pypdf"


def test_pypdf_keeps_a_bound_against_hostile_arrays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert 100_000 < PYPDF_LIMITS["array_maximum_element_count"] <= 10_000_000
    monkeypatch.setitem(PYPDF_LIMITS, "array_maximum_element_count", 1_000)
    data = _pdf_with_big_array(5_000)
    with pytest.raises(DocumentError) as info:
        _read_pypdf(tmp_path / "hostile.pdf", data, None)
    assert info.value.problem is Problem.MALFORMED


# --------------------------------------------------------------------------- cut short: salvage


def test_truncated_pdf_gives_the_pages_before_the_cut(tmp_path: Path) -> None:
    data = make_pdf(PAGES)
    cut = data.index(b"Gamma")  # inside page three's content stream: page three and the trailer are lost
    path = write(tmp_path, "cut.pdf", data[:cut])
    doc = parse_document(path)
    assert [p.number for p in doc.pages] == [1, 2]
    assert "lighthouses" in doc.pages[0].text and "neap" in doc.pages[1].text
    assert "ends early" in doc.metadata["partly_read"]
    assert doc.metadata["parser"] == "salvage+pdfium"


def _pdf_with_pages_in_an_object_stream() -> tuple[bytes, int]:
    """Pages inside a Flate object stream (as pdfTeX and Word write them), catalog after it.
    Returns the file and the offset just after the object stream."""
    pages = [page_dict(2, parent=7), page_dict(3, parent=7)]
    offsets, body = [], b""
    for p in pages:
        offsets.append(len(body))
        body += p + b"\n"
    header = b"5 %d 6 %d " % (offsets[0], offsets[1])
    packed = zlib.compress(header + body)
    objstm = (b"<< /Type /ObjStm /N 2 /First %d /Filter /FlateDecode /Length %d >>\nstream\n"
              % (len(header), len(packed)) + packed + b"\nendstream")
    bodies = [FONT, content(PAGES[0]), content(PAGES[1]), objstm,
              b"<< >>", b"<< >>",  # 5 and 6 live in the object stream; these are placeholders
              b"<< /Type /Pages /Kids [5 0 R 6 0 R] /Count 2 >>", b"<< /Type /Catalog /Pages 7 0 R >>"]
    data = build_pdf(bodies, root=8)
    # drop the placeholders: a reader finds 5 and 6 only in the object stream
    data = data.replace(b"5 0 obj\n<< >>\nendobj\n", b"").replace(b"6 0 obj\n<< >>\nendobj\n", b"")
    return data, data.index(b"endobj", data.index(b"/ObjStm")) + len(b"endobj\n")


def test_pages_in_an_object_stream_are_salvaged(tmp_path: Path) -> None:
    data, after_objstm = _pdf_with_pages_in_an_object_stream()
    path = write(tmp_path, "objstm-cut.pdf", data[:after_objstm + 10])
    doc = parse_document(path)
    assert len(doc.pages) == 2
    assert "lighthouses" in doc.pages[0].text and "neap" in doc.pages[1].text
    assert "partly_read" in doc.metadata


def test_rebuild_ignores_absurd_object_numbers() -> None:
    data = make_pdf(PAGES)
    rebuilt = rebuild_pdf(data + b"\n999999999 0 obj\n<< /Type /Page >>\nendobj\n")
    assert rebuilt is not None
    assert b"999999999" not in rebuilt[0]
    assert rebuild_pdf(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n") is None


def test_cut_short_with_no_page_left_says_so(tmp_path: Path) -> None:
    data = make_pdf(PAGES)
    path = write(tmp_path, "stub.pdf", data[: data.index(b"3 0 obj")])  # catalog and page tree only
    err = problem(path)
    assert err.problem is Problem.MALFORMED and "ends early" in err.detail


# --------------------------------------------------------------------------- other formats named .pdf


def test_html_named_pdf_is_read_as_html(tmp_path: Path) -> None:
    path = write(tmp_path, "saved-page.pdf", b"<!DOCTYPE html><html><head><title>Tide tables</title></head>"
                 b"<body><h1>Tides</h1><p>Spring tides follow the full and new moon.</p></body></html>")
    doc = parse_document(path)
    assert doc.format == "html" and doc.title == "Tide tables"
    assert "Spring tides" in doc.pages[0].text
    assert "HTML" in doc.metadata["read_as"]


def test_text_named_pdf_is_read_as_text(tmp_path: Path) -> None:
    path = write(tmp_path, "notes.pdf", "Keepers' notes\n\nThe lamp was lit at dusk every day.\n".encode())
    doc = parse_document(path)
    assert doc.format == "text" and "lamp was lit" in doc.pages[0].text


def test_docx_named_pdf_is_read_as_docx(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("The keeper's log records every passing ship.")
    buf = io.BytesIO()
    d.save(buf)
    doc = parse_document(write(tmp_path, "log.pdf", buf.getvalue()))
    assert doc.format == "docx" and "passing ship" in doc.pages[0].text


def test_image_named_pdf_is_refused_saying_what_it_is(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 40
    err = problem(write(tmp_path, "scan.pdf", png))
    assert err.problem is Problem.UNSUPPORTED and "PNG image" in err.detail


def test_pdf_that_lost_its_header_is_still_a_pdf(tmp_path: Path) -> None:
    data = make_pdf(PAGES)
    doc = parse_document(write(tmp_path, "headless.pdf", data[data.index(b"1 0 obj"):]))
    assert doc.format == "pdf" and "Gamma" in doc.pages[2].text


def test_binary_junk_named_pdf_is_malformed(tmp_path: Path) -> None:
    err = problem(write(tmp_path, "junk.pdf", bytes(range(256)) * 4))
    assert err.problem is Problem.MALFORMED and "%PDF-" in err.detail


@pytest.mark.parametrize("data, kind", [
    (b"%PDF-1.7\n", "pdf"),
    (b"\xef\xbb\xbf<!doctype html><p>x", "html"),
    (b"<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'>", "html"),
    (b"PK\x03\x04rest", "zip"),
    (b"plain words\n", "text"),
    (b"\xff\xd8\xff\xe0", "a JPEG image"),
    (b"{\\rtf1\\ansi", "an RTF document"),
])
def test_sniff(data: bytes, kind: str) -> None:
    assert sniff(data) == kind


# --------------------------------------------------------------------------- what the library says


def test_a_cut_short_pdf_is_indexed_and_listed_as_partly_read(library: Path, embedder, tmp_path: Path) -> None:
    from edgechat.core.engine import Engine
    from edgechat.core.records import FileState

    folder = tmp_path / "docs"
    folder.mkdir()
    data = make_pdf(PAGES)
    write(folder, "cut.pdf", data[: data.index(b"Gamma")])
    write(folder, "whole.pdf", data)
    with Engine(library, embedder=embedder) as engine:
        summary = engine.index([folder])
        assert summary.failed == []
        files = {Path(f.path).name: f for f in engine.files()}
    cut, whole = files["cut.pdf"], files["whole.pdf"]
    assert cut.state is FileState.DONE and cut.pages == 2
    assert cut.detail.startswith("partly read: 2 page(s) recovered") and "ends early" in cut.detail
    assert whole.state is FileState.DONE and whole.detail == "" and whole.pages == 3
