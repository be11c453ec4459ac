"""Turning a file into text: PDF, plain text, Markdown, HTML, Word (.docx), EPUB, PowerPoint (.pptx),
Excel (.xlsx) and CSV, OpenDocument text (.odt) and RTF.

`parse_document(path)` returns a `Document` whose `pages` are PDF pages (1-based, in file order,
empty pages kept so numbers stay right), slides (likewise), runs of spreadsheet rows, or, for
every other format, sections ("section n"). Every failure is a `DocumentError` carrying a
`Problem`; nothing else escapes.

Page texts are final: chunk offsets index into `Page.text`, so nothing here (or downstream) may
rewrite a page's text after the `Page` is made. For plain text and Markdown each section is an
exact slice of the decoded file, and the sections joined give the decoded file back.

One module per format (`pdf`, `text` for plain text and Markdown, `html`, `docx`, `epub`, `pptx`,
`spreadsheet` for Excel and CSV, `odt`, `rtf`), the helpers they share in `common`; this module
picks the parser by suffix and reads the bytes. `READABLE` names the formats for people.
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from pathlib import Path

from edgechat.core.documents.common import SECTION_CHARS, _describe, _mb
from edgechat.core.documents.docx import _parse_docx
from edgechat.core.documents.epub import _parse_epub
from edgechat.core.documents.html import _parse_html
from edgechat.core.documents.odt import _parse_odt
from edgechat.core.documents.pdf import _parse_pdf
from edgechat.core.documents.pptx import _parse_pptx
from edgechat.core.documents.rtf import _parse_rtf
from edgechat.core.documents.spreadsheet import _parse_csv, _parse_xlsx
from edgechat.core.documents.text import _parse_text
from edgechat.core.records import Document, DocumentError, Problem

__all__ = ["READABLE", "SUPPORTED_SUFFIXES", "SECTION_CHARS", "is_supported", "parse_document", "readable_formats"]

# BeautifulSoup's advice ("looks like XML", "looks like a file name") is reported against the
# caller, a module of this package; the filters are global and set once because catch_warnings
# is not thread-safe and documents are parsed in worker threads.
warnings.filterwarnings("ignore", module=re.escape(__name__) + r"(\.|$)")

_PDF = {".pdf"}
_TEXT = {".txt", ".text", ".rst", ".log"}
_MARKDOWN = {".md", ".markdown"}
_HTML = {".html", ".htm", ".xhtml"}
_DOCX = {".docx"}
_EPUB = {".epub"}
_PPTX = {".pptx"}
_XLSX = {".xlsx", ".xlsm"}
_CSV = {".csv", ".tsv"}
_ODT = {".odt"}
_RTF = {".rtf"}

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    _PDF | _TEXT | _MARKDOWN | _HTML | _DOCX | _EPUB | _PPTX | _XLSX | _CSV | _ODT | _RTF)

# What is read, as people name it, with the suffixes: the window's drop zone and file dialog
# and `edgechat status` show these (the README lists them too).
READABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("PDF (scanned pages read by OCR)", (".pdf",)),
    ("Word (.docx)", (".docx",)),
    ("PowerPoint (.pptx)", (".pptx",)),
    ("Excel (.xlsx)", (".xlsx", ".xlsm")),
    ("CSV", (".csv", ".tsv")),
    ("OpenDocument text (.odt)", (".odt",)),
    ("RTF", (".rtf",)),
    ("EPUB", (".epub",)),
    ("HTML", (".html", ".htm", ".xhtml")),
    ("Markdown", (".md", ".markdown")),
    ("text", (".txt", ".text", ".rst", ".log")),
)
assert {s for _, suffixes in READABLE for s in suffixes} == SUPPORTED_SUFFIXES


def readable_formats() -> str:
    """"PDF, Word (.docx), ..., Markdown and text files": what is read, in a sentence."""
    names = [name for name, _ in READABLE]
    return ", ".join(names[:-1]) + f" and {names[-1]} files"


def is_supported(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in SUPPORTED_SUFFIXES


def parse_document(
    path: str | os.PathLike[str],
    *,
    password: str | None = None,
    max_bytes: int = 200 * 1024 * 1024,
) -> Document:
    """Read one file into a `Document`, or raise `DocumentError` saying why it cannot be."""
    try:
        p = Path(path)
        data = _read_bytes(p, max_bytes)
        suffix = p.suffix.lower()
        if suffix in _PDF:
            return _parse_pdf(p, data, password)
        if suffix in _TEXT:
            return _parse_text(p, data, markdown=False)
        if suffix in _MARKDOWN:
            return _parse_text(p, data, markdown=True)
        if suffix in _HTML:
            return _parse_html(p, data)
        if suffix in _DOCX:
            return _parse_docx(p, data, max_bytes)
        if suffix in _EPUB:
            return _parse_epub(p, data, max_bytes)
        if suffix in _PPTX:
            return _parse_pptx(p, data, max_bytes)
        if suffix in _XLSX:
            return _parse_xlsx(p, data, max_bytes)
        if suffix in _CSV:
            return _parse_csv(p, data)
        if suffix in _ODT:
            return _parse_odt(p, data, max_bytes)
        if suffix in _RTF:
            return _parse_rtf(p, data)
        raise DocumentError(Problem.UNSUPPORTED, f"'{suffix or p.name}' files are not read")
    except DocumentError:
        raise
    except RecursionError:
        raise DocumentError(Problem.MALFORMED, "structure nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - anything a parser throws on a broken file
        raise DocumentError(Problem.MALFORMED, _describe(exc)) from exc


def _read_bytes(p: Path, max_bytes: int) -> bytes:
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DocumentError(Problem.UNREADABLE, "file not found") from None
    except OSError as exc:
        raise DocumentError(Problem.UNREADABLE, exc.strerror or _describe(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise DocumentError(Problem.UNREADABLE, "is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise DocumentError(Problem.UNREADABLE, "not a regular file")
    if p.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise DocumentError(Problem.UNSUPPORTED, f"'{p.suffix or p.name}' files are not read")
    if st.st_size > max_bytes:
        raise DocumentError(Problem.TOO_LARGE, f"{_mb(st.st_size)} (limit {_mb(max_bytes)})")
    if st.st_size == 0:
        raise DocumentError(Problem.EMPTY, "0 bytes")
    try:
        with open(p, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise DocumentError(Problem.UNREADABLE, exc.strerror or _describe(exc)) from None
    if len(data) > max_bytes:
        raise DocumentError(Problem.TOO_LARGE, f"more than {_mb(max_bytes)}")
    if not data.strip():
        raise DocumentError(Problem.EMPTY, "only whitespace" if data else "0 bytes")
    return data
