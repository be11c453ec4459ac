"""parse_document: every format, every Problem. Fixtures are built here, in tmp_path."""

from __future__ import annotations

import io
import os
import struct
import sys
import zlib
from pathlib import Path

import pytest

from edgechat.core import documents
from edgechat.core.documents import SUPPORTED_SUFFIXES, is_supported, parse_document
from edgechat.core.documents.pdf import _pdf_date, _read_pypdf
from edgechat.core.records import Document, DocumentError, Problem
from tests.helpers import make_pdf

# --------------------------------------------------------------------------- fixture builders




def encrypt_pdf(data: bytes, user_password: str, owner_password: str = "owner",
                algorithm: str = "AES-256") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def tiny_png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


PAGE_1 = "Alpha page one talks about lighthouses\nand the keepers who lived in them."
PAGE_2 = "Beta page two covers tides (spring and neap) and the moon."
PAGE_3 = "Gamma page three ends the story of the coast."


@pytest.fixture
def text_pdf(tmp_path: Path) -> Path:
    path = tmp_path / "coast.pdf"
    path.write_bytes(make_pdf([PAGE_1, PAGE_2, PAGE_3], info={
        "Title": "Lighthouses of the Coast", "Author": "Ada Keeper",
        "CreationDate": "D:20230115093000+01'00'", "ModDate": "D:20240201", "Producer": "hand",
    }))
    return path


def problem_of(path: Path, **kwargs) -> Problem:
    with pytest.raises(DocumentError) as info:
        parse_document(path, **kwargs)
    assert isinstance(info.value.problem, Problem)
    return info.value.problem


# --------------------------------------------------------------------------- API


def test_supported_suffixes() -> None:
    for suffix in (".pdf", ".txt", ".md", ".markdown", ".html", ".htm", ".docx", ".epub", ".pptx", ".xlsx", ".csv",
                   ".odt", ".rtf"):
        assert suffix in SUPPORTED_SUFFIXES
        assert is_supported(f"x/y/file{suffix}")
        assert is_supported(Path(f"FILE{suffix.upper()}"))
    assert not is_supported("a.doc")
    assert not is_supported("a.xls")
    assert not is_supported("README")


# --------------------------------------------------------------------------- PDF


def test_pdf_pages_title_metadata(text_pdf: Path) -> None:
    doc = parse_document(text_pdf)
    assert isinstance(doc, Document)
    assert doc.format == "pdf"
    assert doc.path == str(text_pdf)
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert "lighthouses" in doc.pages[0].text and "keepers" in doc.pages[0].text
    assert "(spring and neap)" in doc.pages[1].text
    assert "Gamma" in doc.pages[2].text
    assert doc.title == "Lighthouses of the Coast"
    assert doc.metadata["author"] == "Ada Keeper"
    assert doc.metadata["pages"] == "3"
    assert doc.metadata["producer"] == "hand"
    assert doc.metadata["created"] == "2023-01-15T09:30:00+01:00"
    assert doc.metadata["modified"] == "2024-02-01"
    assert all(isinstance(v, str) for v in doc.metadata.values())


def test_pdf_page_text_is_exactly_what_pdfium_extracts(text_pdf: Path) -> None:
    """PDFium's text (what QtPdf's viewer numbers characters by), line ends "\r\n" made " \n"."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(text_pdf.read_bytes())
    expected = [pdf[i].get_textpage().get_text_range().replace("\r\n", " \n") for i in range(len(pdf))]
    pdf.close()
    assert [p.text for p in parse_document(text_pdf).pages] == expected
    assert parse_document(text_pdf).metadata["parser"] == "pdfium"


def test_pdf_junk_title_and_malformed_dates_fall_back(tmp_path: Path) -> None:
    path = tmp_path / "quarterly-report.pdf"
    path.write_bytes(make_pdf([PAGE_1], info={
        "Title": "Microsoft Word - report.doc", "CreationDate": "D:00000805034056",
        "ModDate": "yesterday-ish",
    }))
    doc = parse_document(path)
    assert doc.title == "quarterly-report"
    assert "created" not in doc.metadata and "modified" not in doc.metadata


@pytest.mark.parametrize("title", ["", "untitled", "Untitled", "Document1", "C:\\tmp\\x.doc", "   "])
def test_pdf_meaningless_titles(tmp_path: Path, title: str) -> None:
    path = tmp_path / "named.pdf"
    path.write_bytes(make_pdf([PAGE_1], info={"Title": title}))
    assert parse_document(path).title == "named"


def test_pdf_blank_pages_are_kept_so_numbers_stay_right(tmp_path: Path) -> None:
    path = tmp_path / "gaps.pdf"
    path.write_bytes(make_pdf([PAGE_1, "", PAGE_3]))
    doc = parse_document(path)
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert doc.pages[1].text.strip() == ""
    assert "Gamma" in doc.pages[2].text


def test_pdf_without_text_layer_is_no_text(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(make_pdf(["", ""]))
    assert problem_of(path) is Problem.NO_TEXT


def test_pdf_with_a_few_stray_characters_is_no_text(tmp_path: Path) -> None:
    path = tmp_path / "scan-with-page-numbers.pdf"
    path.write_bytes(make_pdf(["1", "2", "3", "p. 4"]))
    assert problem_of(path) is Problem.NO_TEXT


def test_pdf_page_that_fails_is_skipped(text_pdf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the pypdf reader (the fallback when PDFium cannot open a file)."""
    from pypdf import PageObject

    original = PageObject.extract_text

    def flaky(self, *args, **kwargs):
        text = original(self, *args, **kwargs)
        if "Beta" in text:
            raise ValueError("broken content stream")
        return text

    monkeypatch.setattr(PageObject, "extract_text", flaky)
    doc = _read_pypdf(text_pdf, text_pdf.read_bytes(), None)
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert doc.pages[1].text == ""
    assert "Gamma" in doc.pages[2].text
    assert doc.metadata["unreadable_pages"] == "1" and doc.metadata["partly_read"].startswith("2 of 3 pages read")


def test_pdf_where_every_page_fails_raises_document_error(text_pdf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypdf import PageObject

    def broken(self, *args, **kwargs):
        raise KeyError("/Contents")

    monkeypatch.setattr(PageObject, "extract_text", broken)
    with pytest.raises(DocumentError) as info:
        _read_pypdf(text_pdf, text_pdf.read_bytes(), None)
    assert info.value.problem in (Problem.MALFORMED, Problem.NO_TEXT)


@pytest.mark.parametrize("algorithm", ["AES-256", "AES-128", "RC4-128"])
def test_pdf_with_user_password(tmp_path: Path, algorithm: str) -> None:
    path = tmp_path / "secret.pdf"
    path.write_bytes(encrypt_pdf(make_pdf([PAGE_1, PAGE_2]), "s3cret", algorithm=algorithm))
    assert problem_of(path) is Problem.PASSWORD_REQUIRED
    with pytest.raises(DocumentError) as wrong:
        parse_document(path, password="guess")
    assert wrong.value.problem is Problem.PASSWORD_REQUIRED
    doc = parse_document(path, password="s3cret")
    assert [p.number for p in doc.pages] == [1, 2]
    assert "lighthouses" in doc.pages[0].text
    # the owner password opens it too
    assert "Beta" in parse_document(path, password="owner").pages[1].text


@pytest.mark.parametrize("algorithm", ["AES-256", "RC4-128"])
def test_pdf_with_empty_user_password_is_indexed(tmp_path: Path, algorithm: str) -> None:
    path = tmp_path / "restricted.pdf"
    path.write_bytes(encrypt_pdf(make_pdf([PAGE_1, PAGE_2]), "", algorithm=algorithm))
    doc = parse_document(path)
    assert [p.number for p in doc.pages] == [1, 2]
    assert "lighthouses" in doc.pages[0].text
    assert doc.metadata.get("encrypted") == "yes"
    # a password given for a file that did not need it does no harm
    assert parse_document(path, password="whatever").pages[1].text == doc.pages[1].text


def test_truncated_pdf_is_malformed(tmp_path: Path) -> None:
    data = make_pdf([PAGE_1, PAGE_2, PAGE_3])
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 3])
    assert problem_of(path) is Problem.MALFORMED


@pytest.mark.parametrize("content", [b"%PDF-1.4\n%%EOF", b"\x01\x02not a pdf\x00\x03" * 20, b"%PDF-1.7\n" + b"\x00" * 300])
def test_garbage_pdf_is_malformed(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.pdf"
    path.write_bytes(content)
    assert problem_of(path) is Problem.MALFORMED


def test_pdf_parsing_prints_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    import re

    data = make_pdf([PAGE_1, PAGE_2])
    # pypdf repairs both of these, and by default says so on stderr
    data = re.sub(rb"startxref\n\d+", b"startxref\n12", data)
    data = re.sub(rb"/Contents \d+ 0 R", b"/Contents 99 0 R", data, count=1)
    path = tmp_path / "noisy.pdf"
    path.write_bytes(data)
    doc = parse_document(path)
    assert doc.pages[0].text == "" and "Beta" in doc.pages[1].text
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_pdf_date_parsing() -> None:
    d = _pdf_date
    assert d("D:20230115093000+01'00'") == "2023-01-15T09:30:00+01:00"
    assert d("D:20230115093000Z") == "2023-01-15T09:30:00+00:00"
    assert d("D:20230115093000Z00'00'") == "2023-01-15T09:30:00+00:00"
    assert d("D:20230115093000-05'00") == "2023-01-15T09:30:00-05:00"
    assert d("D:2023") == "2023-01-01"
    assert d("20230115") == "2023-01-15"
    assert d("D:20231345") is None  # month 13
    assert d("D:00000805034056") is None
    assert d("garbage") is None
    assert d(None) is None
    assert d("2021-06-07T16:07:57") == "2021-06-07T16:07:57"


# --------------------------------------------------------------------------- plain text, Markdown


def test_short_text_file_is_one_section(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Buy milk.\n\nCall the harbour master.\n", encoding="utf-8")
    doc = parse_document(path)
    assert doc.format == "text"
    assert doc.title == "notes"
    assert [(p.number, p.text) for p in doc.pages] == [(1, "Buy milk.\n\nCall the harbour master.\n")]


def test_long_text_is_split_at_paragraphs_into_exact_slices(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {i}. " + "The tide comes in and goes out again. " * (5 + i % 7) for i in range(200)]
    text = "\r\n\r\n".join(paragraphs) + "\r\n"
    path = tmp_path / "log.txt"
    path.write_bytes(text.encode("utf-8"))
    doc = parse_document(path)
    assert len(doc.pages) > 5
    assert [p.number for p in doc.pages] == list(range(1, len(doc.pages) + 1))
    assert "".join(p.text for p in doc.pages) == text
    for page in doc.pages[:-1]:
        assert len(page.text) <= 1.5 * documents.SECTION_CHARS
        assert page.text.endswith("\r\n\r\n")  # cut at a paragraph boundary
    for page in doc.pages[1:]:
        assert page.text.startswith("Paragraph ")


def test_long_text_without_paragraphs_is_still_split(tmp_path: Path) -> None:
    text = ("word " * 5000) + "\n" + ("x" * 20000)
    path = tmp_path / "wall.txt"
    path.write_text(text, encoding="utf-8")
    doc = parse_document(path)
    assert len(doc.pages) > 3
    assert "".join(p.text for p in doc.pages) == text
    assert max(len(p.text) for p in doc.pages) <= 1.5 * documents.SECTION_CHARS


def test_text_encodings(tmp_path: Path) -> None:
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfCaf\xc3\xa9 au lait")
    assert parse_document(bom).pages[0].text == "Café au lait"
    legacy = tmp_path / "legacy.txt"
    legacy.write_bytes("Grüße – “quoted” café".encode("cp1252"))
    doc = parse_document(legacy)
    assert doc.pages[0].text == "Grüße – “quoted” café"
    assert doc.metadata["encoding"] == "cp1252"
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"abc \x81\x8d\x8f\x90\x9d def")  # undefined in cp1252
    assert parse_document(latin).pages[0].text.startswith("abc ")
    utf16 = tmp_path / "wide.txt"
    utf16.write_bytes("Wide text here".encode("utf-16"))
    assert parse_document(utf16).pages[0].text == "Wide text here"


def test_binary_text_file_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "data.txt"
    path.write_bytes(bytes(range(256)) * 20)
    assert problem_of(path) is Problem.MALFORMED


def test_utf16_without_bom_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes("Plain words in UTF-16 without a byte order mark.".encode("utf-16-le"))
    assert parse_document(path).pages[0].text == "Plain words in UTF-16 without a byte order mark."


MARKDOWN = """---
layout: page
---
# Tide Tables

How to read them.

```bash
# not a heading, a comment in code
echo hi
```

## Spring tides

They are big.

## Neap tides

They are small.

### Detail

Still part of neap tides.

Extra
-----

Setext heading section.
"""


def test_markdown_sections_and_title(tmp_path: Path) -> None:
    path = tmp_path / "tides.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    doc = parse_document(path)
    assert doc.format == "markdown"
    assert doc.title == "Tide Tables"
    assert "".join(p.text for p in doc.pages) == MARKDOWN
    assert [p.number for p in doc.pages] == [1, 2, 3, 4]
    assert doc.pages[0].text.startswith("---\nlayout")
    assert "# not a heading" in doc.pages[0].text
    assert doc.pages[1].text.startswith("## Spring tides")
    assert doc.pages[2].text.startswith("## Neap tides") and "### Detail" in doc.pages[2].text
    assert doc.pages[3].text.startswith("Extra\n-----")


def test_markdown_heading_only_sections_join_the_next(tmp_path: Path) -> None:
    text = "# Guide\n\n## One\n\nFirst.\n\n## Two\n\nSecond.\n"
    path = tmp_path / "guide.markdown"
    path.write_text(text, encoding="utf-8")
    doc = parse_document(path)
    assert [p.text for p in doc.pages] == ["# Guide\n\n## One\n\nFirst.\n\n", "## Two\n\nSecond.\n"]
    assert doc.title == "Guide"


def test_markdown_title_sources(tmp_path: Path) -> None:
    fm = tmp_path / "a.md"
    fm.write_text("---\ntitle: \"Front Matter Title\"\n---\n# Heading\n\ntext\n", encoding="utf-8")
    assert parse_document(fm).title == "Front Matter Title"
    setext = tmp_path / "b.md"
    setext.write_text("The **Setext** Title\n===\n\ntext\n", encoding="utf-8")
    assert parse_document(setext).title == "The Setext Title"
    none = tmp_path / "no-headings.md"
    none.write_text("just text\n\n## a subheading only\n", encoding="utf-8")
    assert parse_document(none).title == "no-headings"
    junk = tmp_path / "junk-title.md"
    junk.write_text("# Untitled\n\ntext\n", encoding="utf-8")
    assert parse_document(junk).title == "junk-title"


def test_long_markdown_section_is_split(tmp_path: Path) -> None:
    body = "\n\n".join("Sentence about ropes and knots. " * 8 for _ in range(100))
    text = f"# Knots\n\n## All of them\n\n{body}\n\n## Short\n\nEnd.\n"
    path = tmp_path / "knots.md"
    path.write_text(text, encoding="utf-8")
    doc = parse_document(path)
    assert "".join(p.text for p in doc.pages) == text
    assert len(doc.pages) > 3
    assert doc.pages[-1].text == "## Short\n\nEnd.\n"
    assert max(len(p.text) for p in doc.pages) <= 1.5 * documents.SECTION_CHARS + 40


# --------------------------------------------------------------------------- HTML

HTML = """<!DOCTYPE html>
<html><head><title>Harbour Guide</title><style>p { color: red }</style>
<script>var secret = "do not index";</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About navigation</a></nav>
<h1>Welcome</h1><p>The harbour is <b>busy</b> in summer.<br>Boats leave at dawn.</p>
<!-- a comment that must not appear -->
<ul><li>Ferries</li><li>Fishing boats</li></ul>
<h2>Prices</h2>
<table><tr><th>Trip</th><th>Cost</th></tr><tr><td>Island</td><td>12 &euro;</td></tr></table>
<pre>  indented
    code</pre>
<h2>Contact</h2><div>Call us.</div>
</body></html>
"""


def test_html_sections_title_and_cleanup(tmp_path: Path) -> None:
    path = tmp_path / "guide.html"
    path.write_text(HTML, encoding="utf-8")
    doc = parse_document(path)
    assert doc.format == "html"
    assert doc.title == "Harbour Guide"
    assert [p.number for p in doc.pages] == [1, 2, 3]
    everything = "\n".join(p.text for p in doc.pages)
    assert "secret" not in everything and "color" not in everything
    assert "navigation" not in everything and "comment" not in everything
    assert doc.pages[0].text.startswith("Welcome")
    assert "The harbour is busy in summer.\nBoats leave at dawn." in doc.pages[0].text
    assert "Ferries\nFishing boats" in doc.pages[0].text
    assert doc.pages[1].text.startswith("Prices")
    assert "Trip | Cost\nIsland | 12 €" in doc.pages[1].text
    assert "  indented\n    code" in doc.pages[1].text
    assert doc.pages[2].text == "Contact\n\nCall us."


def test_html_title_falls_back_to_h1_then_name(tmp_path: Path) -> None:
    a = tmp_path / "a.htm"
    a.write_text("<html><head><title>Untitled Document</title></head><body><h1>Real Name</h1><p>x</p></body></html>")
    assert parse_document(a).title == "Real Name"
    b = tmp_path / "plain-page.html"
    b.write_text("<p>Only a paragraph of text.</p>")
    assert parse_document(b).title == "plain-page"


def test_html_without_text_is_no_text(tmp_path: Path) -> None:
    path = tmp_path / "empty-body.html"
    path.write_text("<html><head><title>X</title><script>var a = 1;</script></head><body><img src='a.png'></body></html>")
    assert problem_of(path) is Problem.NO_TEXT


def test_html_encoding_from_meta(tmp_path: Path) -> None:
    path = tmp_path / "latin.html"
    path.write_bytes('<html><head><meta charset="windows-1252"></head><body><p>Grüße aus Köln</p></body></html>'
                     .encode("cp1252"))
    assert "Grüße aus Köln" in parse_document(path).pages[0].text


# --------------------------------------------------------------------------- DOCX


def _docx(path: Path, build) -> Path:
    import docx

    d = docx.Document()
    build(d)
    d.save(str(path))
    return path


def test_docx_body_order_title_metadata_and_sections(tmp_path: Path) -> None:
    import datetime as dt

    def build(d):
        d.core_properties.title = "Harbour Annual Report"
        d.core_properties.author = "Ada Keeper"
        d.core_properties.created = dt.datetime(2022, 3, 4, 5, 6, 7)
        d.add_paragraph("Preface text before any heading.")
        d.add_heading("Introduction", level=1)
        d.add_paragraph("The harbour had a good year.")
        table = d.add_table(rows=2, cols=2)
        table.cell(0, 0).text, table.cell(0, 1).text = "Ships", "Count"
        table.cell(1, 0).text, table.cell(1, 1).text = "Ferries", "12"
        d.add_paragraph("After the table.")
        d.add_heading("Details", level=2)
        d.add_paragraph("A subsection stays in its chapter.")
        d.add_heading("Finances", level=1)
        d.add_paragraph("Money came in.")

    doc = parse_document(_docx(tmp_path / "report.docx", build))
    assert doc.format == "docx"
    assert doc.title == "Harbour Annual Report"
    assert doc.metadata["author"] == "Ada Keeper"
    assert doc.metadata["created"].startswith("2022-03-04T05:06:07")
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert doc.pages[0].text == "Preface text before any heading."
    intro = doc.pages[1].text
    assert intro.startswith("Introduction")
    assert intro.index("good year") < intro.index("Ships | Count") < intro.index("After the table")
    assert "Ferries | 12" in intro
    assert "Details" in intro and "subsection" in intro
    assert doc.pages[2].text == "Finances\n\nMoney came in."


def test_docx_title_from_first_heading_then_name(tmp_path: Path) -> None:
    def with_heading(d):
        d.add_paragraph("intro line")
        d.add_heading("Mooring Knots", level=2)
        d.add_paragraph("text")

    assert parse_document(_docx(tmp_path / "k.docx", with_heading)).title == "Mooring Knots"

    def title_style(d):
        d.core_properties.title = "Untitled"
        d.add_heading("The Real Title", level=0)
        d.add_paragraph("body")

    assert parse_document(_docx(tmp_path / "t.docx", title_style)).title == "The Real Title"

    def plain(d):
        d.add_paragraph("Just some words in a paragraph.")

    assert parse_document(_docx(tmp_path / "plain-notes.docx", plain)).title == "plain-notes"


def test_docx_without_headings_is_cut_into_sections(tmp_path: Path) -> None:
    def build(d):
        for i in range(120):
            d.add_paragraph(f"Paragraph {i}: " + "rope and sail and anchor " * 8)

    doc = parse_document(_docx(tmp_path / "long.docx", build))
    assert len(doc.pages) > 3
    assert [p.number for p in doc.pages] == list(range(1, len(doc.pages) + 1))
    assert all(len(p.text) <= 1.5 * documents.SECTION_CHARS for p in doc.pages)
    assert all(p.text.startswith("Paragraph ") for p in doc.pages)
    assert sum(p.text.count("Paragraph ") for p in doc.pages) == 120


def test_docx_with_only_pictures_is_no_text(tmp_path: Path) -> None:
    png = tmp_path / "dot.png"
    png.write_bytes(tiny_png())

    def build(d):
        d.add_picture(str(png))
        d.add_paragraph("")

    assert problem_of(_docx(tmp_path / "pictures.docx", build)) is Problem.NO_TEXT


def test_docx_that_is_not_a_zip_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "fake.docx"
    path.write_bytes(b"This is not a Word file, it is plain text pretending.")
    assert problem_of(path) is Problem.MALFORMED


def test_docx_zip_without_document_is_malformed(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "other.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hi")
    assert problem_of(path) is Problem.MALFORMED


# --------------------------------------------------------------------------- EPUB


def _epub(path: Path, chapters: list[tuple[str, str]], title: str | None = "Sea Stories",
          author: str | None = "Ada Keeper") -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("id-123")
    if title is not None:
        book.set_title(title)
    book.set_language("en")
    if author is not None:
        book.add_author(author)
    items = []
    for i, (heading, body) in enumerate(chapters, start=1):
        ch = epub.EpubHtml(title=heading, file_name=f"chap_{i}.xhtml", lang="en")
        ch.content = f"<html><body><h1>{heading}</h1><p>{body}</p><script>var x;</script></body></html>"
        book.add_item(ch)
        items.append(ch)
    book.toc = tuple(items)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = list(reversed(items))  # reading order differs from file order on purpose
    epub.write_epub(str(path), book)
    return path


def test_epub_chapters_in_spine_order(tmp_path: Path) -> None:
    path = _epub(tmp_path / "book.epub", [("The Storm", "Waves rose high."), ("The Calm", "All was quiet.")])
    doc = parse_document(path)
    assert doc.format == "epub"
    assert doc.title == "Sea Stories"
    assert doc.metadata["author"] == "Ada Keeper"
    assert [p.number for p in doc.pages] == [1, 2]
    assert doc.pages[0].text == "The Calm\n\nAll was quiet."
    assert doc.pages[1].text == "The Storm\n\nWaves rose high."


def test_epub_title_falls_back_to_first_heading(tmp_path: Path) -> None:
    path = _epub(tmp_path / "nameless.epub", [("Chapter One", "Words and more words.")], title="", author=None)
    doc = parse_document(path)
    assert doc.title == "Chapter One"
    assert "author" not in doc.metadata


def test_epub_that_is_broken_is_malformed(tmp_path: Path) -> None:
    import zipfile

    bad = tmp_path / "bad.epub"
    bad.write_bytes(b"PK\x03\x04 truncated zip")
    assert problem_of(bad) is Problem.MALFORMED
    no_container = tmp_path / "nocontainer.epub"
    with zipfile.ZipFile(no_container, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
    assert problem_of(no_container) is Problem.MALFORMED


# --------------------------------------------------------------------------- file-level problems


@pytest.mark.parametrize("name", ["empty.pdf", "empty.txt", "empty.md", "empty.docx", "empty.html", "empty.epub"])
def test_empty_files(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    assert problem_of(path) is Problem.EMPTY


@pytest.mark.parametrize("suffix", [".txt", ".md", ".pdf", ".html", ".docx", ".epub"])
def test_whitespace_only_files_are_empty(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"blank{suffix}"
    path.write_bytes(b"   \n\t\r\n  ")
    assert problem_of(path) is Problem.EMPTY


@pytest.mark.parametrize("content", [b"\xef\xbb\xbf", b"\xef\xbb\xbf  \n", "  \n".encode("utf-16")])
def test_text_with_only_a_byte_order_mark_is_empty(tmp_path: Path, content: bytes) -> None:
    for suffix in (".txt", ".md"):
        path = tmp_path / f"blank{suffix}"
        path.write_bytes(content)
        assert problem_of(path) is Problem.EMPTY


def test_too_large(tmp_path: Path, text_pdf: Path) -> None:
    assert problem_of(text_pdf, max_bytes=100) is Problem.TOO_LARGE
    path = tmp_path / "big.txt"
    path.write_text("x" * 5000)
    assert problem_of(path, max_bytes=4999) is Problem.TOO_LARGE
    assert parse_document(path, max_bytes=5000).pages


def test_unsupported_suffix(tmp_path: Path) -> None:
    for name in ("sheet.xls", "old.doc", "Makefile", "photo.png"):
        path = tmp_path / name
        path.write_bytes(b"some content here")
        assert problem_of(path) is Problem.UNSUPPORTED


def test_missing_file_and_directory_are_unreadable(tmp_path: Path) -> None:
    assert problem_of(tmp_path / "nope.pdf") is Problem.UNREADABLE
    folder = tmp_path / "folder.pdf"
    folder.mkdir()
    assert problem_of(folder) is Problem.UNREADABLE
    assert problem_of(tmp_path) is Problem.UNREADABLE


@pytest.mark.skipif(sys.platform == "win32" or (hasattr(os, "geteuid") and os.geteuid() == 0),
                    reason="needs POSIX permissions and a non-root user")
def test_permission_denied_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "locked.txt"
    path.write_text("secret words")
    path.chmod(0)
    try:
        assert problem_of(path) is Problem.UNREADABLE
    finally:
        path.chmod(0o600)


def test_unreadable_via_open_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locked.txt"
    path.write_text("secret words")
    import builtins

    real_open = builtins.open

    def deny(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    assert problem_of(path) is Problem.UNREADABLE


def test_unexpected_errors_become_malformed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.md"
    path.write_text("# Hello\n\nworld\n")

    def boom(*args, **kwargs):
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(documents, "_parse_text", boom)
    with pytest.raises(DocumentError) as info:
        parse_document(path)
    assert info.value.problem is Problem.MALFORMED
    assert "parser exploded" in info.value.detail


def test_accepts_str_paths(text_pdf: Path) -> None:
    assert parse_document(str(text_pdf)).path == str(text_pdf)
