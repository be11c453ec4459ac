"""PDF: one `Page` per PDF page (1-based, in file order, empty pages kept so the numbers stay
right).

Three readers, tried in this order:

1. PDFium (pypdfium2), the engine inside QtPdf's viewer. It reads real documents many times
   faster than pypdf (benchmarks/pdf_parsers.py), and a page's text is the one QtPdf's
   `getAllText` gives for the same page, character for character (only line ends and PDFium's
   markers are replaced, by characters of the same length), so an offset into `Page.text` is an
   offset QtPdf understands.
2. pypdf, where PDFium cannot open the file, or finds no text in it (pypdf's own repairs differ;
   its limits are raised to what real documents need, with a bound kept against hostile files).
3. Salvage, where neither can open it (a file cut short, a lost cross-reference table): every
   complete object is taken from the bytes (those inside object streams too), the pages among
   them are given a new page tree, and PDFium reads that. The document is then *partly read*:
   `metadata["partly_read"]` says what was recovered and why not all.

A file whose bytes are another format (HTML, plain text, a DOCX or EPUB named .pdf) is read as
what it is; an image or other binary named .pdf is refused saying what it is.

Encrypted files open with the empty password or the one given; a page that fails is left empty
rather than losing the document (and counted in `metadata["unreadable_pages"]`). A page with
almost no text (fewer than MIN_PAGE_TEXT visible characters) that shows an image is a scan: it
is read by OCR (ocr.py), its text replacing PDFium's, its words' boxes in `Document.ocr_words`,
and `metadata["read_by_ocr"]` says how many pages (a file PDFium finds no text in is first
given to pypdf, which decodes some fonts PDFium does not). A file left with almost no text is
`Problem.NO_TEXT`, saying why OCR did not help. Author, dates, producer and creator come from
the info dictionary, and the title when it is meaningful; else the first page's heading and
labelled fields give it (titles.py), else the file name.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import io
import logging
import re
import threading
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from edgechat.core.documents.common import _choose_title, _describe, _iso_date, _put, _safe
from edgechat.core.documents.pdf_repair import OBJECT_RE, rebuild_pdf
from edgechat.core.documents.titles import first_text, page_title
from edgechat.core.records import Document, DocumentError, Page, Problem, WordBox

# pypdf reports every robustness fix it applies through its logger (and a few through warnings);
# on real-world files that is a lot of noise and none of it is actionable for a person.
_pypdf_logger = logging.getLogger("pypdf")
_pypdf_logger.addHandler(logging.NullHandler())
_pypdf_logger.propagate = False
_pypdf_logger.setLevel(logging.CRITICAL + 1)
warnings.filterwarnings("ignore", module=r"pypdf(\.|$)")

MIN_PDF_TEXT = 20  # fewer non-whitespace characters than this in a whole PDF: no text layer

# pypdf's safety limits (pypdf.Configuration) are set for untrusted input at large; real filings
# exceed some of them (a 10-Q's structure tree holds arrays of more than 100,000 elements:
# "Reached maximum array element count"). These are what real documents need while a hostile
# file still meets a bound: each element costs at least two bytes of the file, and a file is at
# most `max_bytes` (200 MB) long. pypdf has every one of these names from 7.0, the lower bound in
# pyproject.toml.
PYPDF_LIMITS: dict[str, int] = {
    "array_maximum_element_count": 5_000_000,
    "dictionary_maximum_element_count": 1_000_000,
    "stream_parsing_work_maximum_count": 50_000_000,
    "page_tree_maximum_entries": 1_000_000,
    "outline_maximum_entries": 1_000_000,
    "named_destinations_maximum_entries": 1_000_000,
    "xform_maximum_invocations_per_extraction": 50_000,
}

# PDFium is not thread-safe and documents are parsed in worker threads: one call at a time.
_PDFIUM_LOCK = threading.Lock()
_FPDF_ERR_PASSWORD = 4


def _parse_pdf(path: Path, data: bytes, password: str | None, max_bytes: int = 200 * 1024 * 1024) -> Document:
    kind = sniff(data)
    if kind == "text" and OBJECT_RE.search(data[:1024]) and b"endobj" in data:
        data = b"%PDF-1.7\n" + data  # PDF objects with no header: a damaged PDF, not text
    elif kind != "pdf":
        return _parse_other(path, data, kind, max_bytes)
    try:
        return _read_pdfium(path, data, password)
    except _PdfiumRefused as refused:
        first = refused.reason
    try:
        return _read_pypdf(path, data, password)
    except DocumentError as exc:
        if exc.problem is not Problem.MALFORMED:
            raise
        pypdf_reason = exc.detail
    salvaged = _salvage(path, data, password)
    if salvaged is not None:
        return salvaged
    raise DocumentError(Problem.MALFORMED, _damage_reason(data, first, pypdf_reason))


# --------------------------------------------------------------------------- another format named .pdf

_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"BM", "a BMP image"),
    (b"RIFF", "a RIFF file (WebP image or audio)"),
)
_OTHERS = (
    (b"{\\rtf", "an RTF document"),
    (b"%!PS", "a PostScript file"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document (.doc, .xls, .ppt)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"AT&TFORM", "a DjVu document"),
)


def sniff(data: bytes) -> str:
    """What `data` is, from its first bytes: "pdf", "html", "text", "zip", or a phrase naming
    another format ("a PNG image"); "unknown" for binary without a known signature. A PDF may
    have up to 1 KB of junk before its %PDF- header (readers accept that)."""
    if b"%PDF-" in data[:1024]:
        return "pdf"
    head = data[:4096]
    for magic, name in _IMAGES + _OTHERS:
        if head.startswith(magic):
            if magic == b"BM" and len(head) > 14 and head[6:10] != b"\x00\x00\x00\x00":
                continue  # "BM" text, not a bitmap header (reserved bytes are zero)
            return name
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    text_head = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text_head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or (
        text_head.startswith((b"<?xml", b"<!--", b"<!doctype")) and b"<html" in text_head
    ):
        return "html"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_like_text(head):
        return "text"
    return "unknown"


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not only a character cut at the end of the sample
            text = head.decode("cp1252", "replace")
        else:
            text = head[: exc.start].decode("utf-8")
    if not text:
        return False
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\t\r\n\x0c")
    return controls <= len(text) // 100


def _parse_other(path: Path, data: bytes, kind: str, max_bytes: int) -> Document:
    """A file named .pdf whose content is another format: read as what it is, or refused
    saying what it is."""
    if kind == "html":
        from edgechat.core.documents.html import _parse_html

        return _as_other(_parse_html(path, data), "HTML")
    if kind == "text":
        from edgechat.core.documents.text import _parse_text

        return _as_other(_parse_text(path, data, markdown=False), "plain text")
    if kind == "zip":
        import zipfile

        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                names = set(zf.namelist())
        except (zipfile.BadZipFile, ValueError, OSError):
            names = set()
        if "word/document.xml" in names:
            from edgechat.core.documents.docx import _parse_docx

            return _as_other(_parse_docx(path, data, max_bytes), "a Word document (DOCX)")
        if "mimetype" in names and "META-INF/container.xml" in names:
            from edgechat.core.documents.epub import _parse_epub

            return _as_other(_parse_epub(path, data, max_bytes), "an EPUB book")
        raise DocumentError(Problem.UNSUPPORTED, "not a PDF: the file is a zip archive")
    if kind == "unknown":
        raise DocumentError(Problem.MALFORMED, "not a PDF: the file has no %PDF- header")
    raise DocumentError(Problem.UNSUPPORTED, f"not a PDF: the file is {kind}")


def _as_other(doc: Document, what: str) -> Document:
    doc.metadata["read_as"] = f"{what} (the file is named .pdf)"
    return doc


# --------------------------------------------------------------------------- PDFium


class _PdfiumRefused(Exception):
    """PDFium could not open the file (or read nothing from it): the next reader is tried."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _read_pdfium(path: Path, data: bytes, password: str | None, *, salvaged: bool = False) -> Document:
    try:
        import pypdfium2 as pdfium
    except ImportError:  # an environment without it (a helper virtualenv): pypdf reads alone
        raise _PdfiumRefused("pypdfium2 is not installed") from None

    ocr_words: dict[int, list[WordBox]] = {}
    ocr_note = ""
    with _PDFIUM_LOCK:
        try:
            doc = _open_pdfium(data, password)
        except DocumentError:
            raise
        except pdfium.PdfiumError as exc:
            raise _PdfiumRefused(_describe(exc)) from None
        try:
            count = len(doc)
            if count <= 0:
                raise _PdfiumRefused("no pages found")
            pages, failures, first_failure = _pdfium_pages(doc, count)
            info = _pdfium_info(doc)
            encrypted = _pdfium_encrypted(doc)
            scanned = _scanned_pages(doc, pages)
            if scanned:
                no_text = _count_visible((p.text for p in pages), MIN_PDF_TEXT) < MIN_PDF_TEXT
                second = _pypdf_text(path, data, password) if no_text and not salvaged else None
                if second is not None:  # pypdf decodes some fonts PDFium does not: no OCR needed
                    return second
                ocr_note = _read_by_ocr(doc, pages, scanned, ocr_words)
        finally:
            doc.close()

    if failures == count:
        raise _PdfiumRefused(f"no page could be read: {first_failure}")
    if _count_visible((p.text for p in pages), MIN_PDF_TEXT) < MIN_PDF_TEXT:
        if salvaged:
            raise _PdfiumRefused("no text in the pages recovered")
        if not scanned:
            try:  # pypdf decodes some fonts PDFium does not: a second opinion before "a scan"
                return _read_pypdf(path, data, password)
            except DocumentError:
                pass
        raise DocumentError(Problem.NO_TEXT, _no_text_reason(scanned, ocr_note))

    metadata: dict[str, str] = {"parser": "pdfium"}
    if encrypted:
        metadata["encrypted"] = "yes"
    title = info.get("Title")
    _put(metadata, "author", _pdf_string(info.get("Author")))
    _put(metadata, "created", _pdf_date(info.get("CreationDate")))
    _put(metadata, "modified", _pdf_date(info.get("ModDate")))
    _put(metadata, "producer", _pdf_string(info.get("Producer")))
    _put(metadata, "creator", _pdf_string(info.get("Creator")))
    metadata["pages"] = str(count)
    if failures:
        metadata["unreadable_pages"] = str(failures)
        metadata["partly_read"] = (
            f"{count - failures} of {count} pages read; {failures} could not be read ({first_failure})"
        )
    if ocr_words:
        metadata["read_by_ocr"] = ocr_note
    document = Document(str(path), _pdf_title(path, _pdf_string(title), pages), "pdf", pages, metadata)
    document.ocr_words = ocr_words
    return document


# --------------------------------------------------------------------------- scanned pages (OCR)

MIN_PAGE_TEXT = 20  # a page with fewer visible characters than this, and an image, is read by OCR


def _scanned_pages(doc, pages: list[Page]) -> list[int]:
    """Indexes of the pages with (almost) no text of their own that show an image: a scan, a
    photographed page. Called under _PDFIUM_LOCK."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    out = []
    for i, page in enumerate(pages):
        if _count_visible([page.text], MIN_PAGE_TEXT) >= MIN_PAGE_TEXT:
            continue
        try:
            pdf_page = doc.get_page(i)
            try:
                has_image = next(iter(pdf_page.get_objects(filter=(raw.FPDF_PAGEOBJ_IMAGE,), max_depth=4)),
                                 None) is not None
            finally:
                pdf_page.close()
        except pdfium.PdfiumError:  # a page PDFium cannot open is counted as unreadable already
            continue
        if has_image:
            out.append(i)
    return out


def _read_by_ocr(doc, pages: list[Page], scanned: list[int], words: dict[int, list[WordBox]]) -> str:
    """Read the `scanned` pages by OCR, in place: their text replaces PDFium's (almost none),
    their word boxes go to `words`. Reports each page to ocr.report_progress. Returns the note
    the file's state shows ("read by OCR: ..."), or why OCR could not run. Called under
    _PDFIUM_LOCK (rendering is PDFium's)."""
    from edgechat.core.documents import ocr

    why = ocr.available()
    if why:
        return why
    return ocr.in_background(lambda: _ocr_pages(doc, pages, scanned, words))


def _ocr_pages(doc, pages: list[Page], scanned: list[int], words: dict[int, list[WordBox]]) -> str:
    from edgechat.core.documents import ocr

    confidences: list[float] = []
    turned = 0
    failed = 0
    total = len(scanned)
    ocr.report_progress(0, total)
    for done, i in enumerate(scanned, 1):
        try:
            pdf_page = doc.get_page(i)
            try:
                read = ocr.read_pdf_page(pdf_page)
            finally:
                pdf_page.close()
        except Exception as exc:  # noqa: BLE001 - one page that cannot be rendered or read must not lose the rest
            logging.getLogger(__name__).warning("OCR of page %d failed: %s", i + 1, _describe(exc))
            failed += 1
            ocr.report_progress(done, total)
            continue
        if _count_visible([read.text], 1) and read.words:
            pages[i] = Page(i + 1, read.text)
            words[i + 1] = read.words
            confidences.append(read.confidence)
            turned += bool(read.rotated)
        ocr.report_progress(done, total)
    if not words:
        return f"OCR found no text on its {total} page image{'s' if total != 1 else ''}"
    n = len(words)
    note = f"{n} of {len(pages)} page{'s' if len(pages) != 1 else ''}"
    note += f", mean word confidence {sum(confidences) / n:.0f} %"
    if turned:
        note += f", {turned} turned upright"
    if failed:
        note += f", {failed} could not be read"
    return note


def _no_text_reason(scanned: list[int], ocr_note: str) -> str:
    if not scanned:
        return "no text layer (a scan or images only?)"
    if ocr_note.startswith("OCR "):  # not installed, no model, or nothing found
        return f"no text layer: a scan or images only, and {ocr_note}"
    return "no text layer: a scan or images only"


def _pypdf_text(path: Path, data: bytes, password: str | None) -> Document | None:
    """pypdf's reading when it finds text where PDFium found none; else None."""
    try:
        return _read_pypdf(path, data, password)
    except DocumentError:
        return None


def _open_pdfium(data: bytes, password: str | None):
    """A PdfDocument, opened with the empty password or the one given; PASSWORD_REQUIRED when
    neither opens it. Called under _PDFIUM_LOCK."""
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) != _FPDF_ERR_PASSWORD:
            raise
    # PDFium says "password" for some damaged files too: ask pypdf whether it is encrypted.
    if not _pypdf_says_encrypted(data):
        raise pdfium.PdfiumError("the file is damaged (PDFium took it for an encrypted one)")
    if not password:
        raise DocumentError(Problem.PASSWORD_REQUIRED, "the PDF is protected by a password")
    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _FPDF_ERR_PASSWORD:
            raise DocumentError(Problem.PASSWORD_REQUIRED, "wrong password") from None
        raise


def _pypdf_says_encrypted(data: bytes) -> bool:
    try:
        from pypdf import PdfReader

        with _pypdf_limits():
            return bool(PdfReader(io.BytesIO(data), strict=False).is_encrypted)
    except Exception:  # noqa: BLE001 - a file pypdf cannot open in any way is not known to be encrypted
        return False


def _pdfium_pages(doc, count: int) -> tuple[list[Page], int, str]:
    import pypdfium2 as pdfium

    pages: list[Page] = []
    failures = 0
    first_failure = ""
    for index in range(count):
        try:
            page = doc.get_page(index)
            try:
                textpage = page.get_textpage()
                try:
                    text = pdfium_page_text(textpage)
                finally:
                    textpage.close()
            finally:
                page.close()
        except pdfium.PdfiumError as exc:  # one broken page must not lose the rest of the document
            failures += 1
            first_failure = first_failure or f"page {index + 1}: {_describe(exc)}"
            text = ""
        pages.append(Page(index + 1, text))
    return pages, failures, first_failure


def pdfium_page_text(textpage) -> str:
    """A page's text as QtPdf's `QPdfDocument.getAllText` gets it (FPDFText_GetText over all the
    page's characters), with characters replaced one for one so every offset stays QtPdf's:
    the "\\r" of PDFium's "\\r\\n" line ends becomes a space, a lone "\\r" a line end, PDFium's
    end-of-line hyphen marker (U+FFFE) a "-", and other control characters (C0 and C1) spaces: a
    font's private code for a bullet comes out as a C1 control, which is no text. Characters
    outside the Basic Multilingual Plane are one Python character but two UTF-16 units in Qt."""
    import pypdfium2.raw as raw

    n = raw.FPDFText_CountChars(textpage)
    if n <= 0:
        return ""
    buffer = (ctypes.c_ushort * (2 * n + 2))()  # PDFium may write more than n in rare cases
    written = raw.FPDFText_GetText(textpage, 0, n, buffer)
    if written <= 1:
        return ""
    text = ctypes.string_at(buffer, 2 * (written - 1)).decode("utf-16-le", "replace")
    return indexed_pdfium_text(text)


_PDFIUM_CONTROLS = {c: " " for c in [*range(32), *range(0x7F, 0xA0)] if chr(c) not in "\n\t"}
_PDFIUM_CONTROLS[0xFFFE] = "-"
_PDFIUM_CONTROLS[0xFFFF] = " "


def indexed_pdfium_text(text: str) -> str:
    """PDFium's page text (or QtPdf's getAllText, the same text) as the indexer stores it: line
    ends and PDFium's markers replaced one character for one, so offsets do not move."""
    text = text.replace("\r\n", " \n")
    if "\r" in text:
        text = text.replace("\r", "\n")
    return text.translate(_PDFIUM_CONTROLS)


def _pdfium_info(doc) -> dict[str, str]:
    try:
        info = doc.get_metadata_dict(skip_empty=True)
        return {str(k): str(v) for k, v in info.items()}
    except ValueError:  # a value that is not UTF-16 (UnicodeDecodeError)
        return {}


def _pdfium_encrypted(doc) -> bool:
    try:
        import pypdfium2.raw as raw

        return bool(raw.FPDF_GetSecurityHandlerRevision(doc) != -1)
    except (AttributeError, ctypes.ArgumentError):  # a pypdfium2 without it, or no document handle
        return False


# --------------------------------------------------------------------------- pypdf


@contextmanager
def _pypdf_limits() -> Iterator[None]:
    """PYPDF_LIMITS in force for this thread's pypdf calls (pypdf.apply_configuration)."""
    from pypdf import apply_configuration

    with apply_configuration(None, **PYPDF_LIMITS):
        yield


def _read_pypdf(path: Path, data: bytes, password: str | None) -> Document:
    with _pypdf_limits():
        return _read_pypdf_configured(path, data, password)


def _read_pypdf_configured(path: Path, data: bytes, password: str | None) -> Document:
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)  # tries the empty user password
    except DependencyError as exc:
        raise DocumentError(Problem.UNSUPPORTED, _describe(exc)) from None
    except NotImplementedError as exc:
        raise DocumentError(Problem.UNSUPPORTED, f"encryption not supported: {_describe(exc)}") from None
    except PdfReadError as exc:
        raise DocumentError(Problem.MALFORMED, _describe(exc)) from None
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file fails in many ways inside pypdf
        raise DocumentError(Problem.MALFORMED, _describe(exc)) from None

    metadata: dict[str, str] = {"parser": "pypdf"}
    if reader.is_encrypted:
        metadata["encrypted"] = "yes"
        try:
            opened = reader.decrypt("") != PasswordType.NOT_DECRYPTED
            if not opened and password:
                opened = reader.decrypt(password) != PasswordType.NOT_DECRYPTED
                if not opened:
                    raise DocumentError(Problem.PASSWORD_REQUIRED, "wrong password")
        except (DependencyError, NotImplementedError) as exc:
            raise DocumentError(Problem.UNSUPPORTED, f"encryption not supported: {_describe(exc)}") from None
        if not opened:
            raise DocumentError(Problem.PASSWORD_REQUIRED, "the PDF is protected by a password")

    try:
        count = len(reader.pages)
    except FileNotDecryptedError:
        raise DocumentError(Problem.PASSWORD_REQUIRED, "the PDF is protected by a password") from None
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged page tree fails in many ways inside pypdf
        raise DocumentError(Problem.MALFORMED, f"page tree unreadable: {_describe(exc)}") from None
    if count == 0:
        raise DocumentError(Problem.MALFORMED, "no pages found")

    pages: list[Page] = []
    failures = 0
    first_failure = ""
    for index in range(count):
        try:
            text = _clean_pdf_text(reader.pages[index].extract_text())
        except FileNotDecryptedError:
            raise DocumentError(Problem.PASSWORD_REQUIRED, "the PDF is protected by a password") from None
        except Exception as exc:  # noqa: BLE001 - one broken page must not lose the rest of the document
            failures += 1
            first_failure = first_failure or f"page {index + 1}: {_describe(exc)}"
            text = ""
        pages.append(Page(index + 1, text))

    if failures == count:
        raise DocumentError(Problem.MALFORMED, f"no page could be read: {first_failure}")
    if _count_visible((p.text for p in pages), MIN_PDF_TEXT) < MIN_PDF_TEXT:
        raise DocumentError(Problem.NO_TEXT, "no text layer (a scan or images only?)")

    info = None
    try:
        info = reader.metadata
    except Exception:  # noqa: BLE001 - damaged metadata fails in many ways inside pypdf: read without it
        info = None
    title = None
    if info is not None:
        title = _safe(lambda: info.get("/Title"))
        _put(metadata, "author", _pdf_string(_safe(lambda: info.get("/Author"))))
        _put(metadata, "created", _pdf_date(_safe(lambda: info.get("/CreationDate"))))
        _put(metadata, "modified", _pdf_date(_safe(lambda: info.get("/ModDate"))))
        _put(metadata, "producer", _pdf_string(_safe(lambda: info.get("/Producer"))))
        _put(metadata, "creator", _pdf_string(_safe(lambda: info.get("/Creator"))))
    metadata["pages"] = str(count)
    if failures:
        metadata["unreadable_pages"] = str(failures)
        metadata["partly_read"] = (
            f"{count - failures} of {count} pages read; {failures} could not be read ({first_failure})"
        )
    return Document(str(path), _pdf_title(path, _pdf_string(title), pages), "pdf", pages, metadata)


def _pdf_title(path: Path, title: str | None, pages: list[Page]) -> str:
    """The title metadata when it is meaningful, else what the first page says it is (its heading,
    the values of its labelled fields: titles.py), else the file name."""
    return _choose_title(path, title, page_title(first_text(p.text for p in pages), path.stem))


def _clean_pdf_text(text: object) -> str:
    if not isinstance(text, str):
        return ""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from broken font maps
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


# --------------------------------------------------------------------------- salvage (the rebuilding: pdf_repair.py)

def _salvage(path: Path, data: bytes, password: str | None) -> Document | None:
    """The pages that can be read from a PDF that no reader opens: its complete objects (those in
    object streams too) written into a new file with a page tree of the pages found, in the order
    of their object numbers (the order writers give them), read by PDFium. None when nothing
    readable is found."""
    try:
        rebuilt = rebuild_pdf(data)
    except (MemoryError, RecursionError, ValueError):
        return None
    if rebuilt is None:
        return None
    pdf, found = rebuilt
    try:
        doc = _read_pdfium(path, pdf, password, salvaged=True)
    except _PdfiumRefused:
        return None
    cut = b"%%EOF" not in data[-2048:]
    why = "the file ends early (cut short)" if cut else "the file's structure is damaged"
    doc.metadata["partly_read"] = (
        f"{len(doc.pages)} page(s) recovered, in the order their objects appear; {why}, "
        "so pages may be missing"
    )
    doc.metadata["parser"] = "salvage+pdfium"
    doc.metadata["recovered_objects"] = str(found)
    return doc


def _damage_reason(data: bytes, pdfium_reason: str, pypdf_reason: str) -> str:
    if b"%%EOF" not in data[-2048:]:
        if re.search(rb"/Filter[ \t\r\n]*/Standard", data):
            return ("the file ends early (cut short?) and is encrypted: its key was in the part "
                    "that is missing, so no page can be recovered")
        return f"the file ends early (cut short?) and no page could be recovered ({pypdf_reason})"
    return f"damaged: neither PDFium nor pypdf can open it ({pypdf_reason or pdfium_reason})"


def _pdf_string(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("latin-1", "replace")
    return _clean_pdf_text(str(value))


_PDF_DATE_RE = re.compile(
    r"^\s*(?:D\s*:)?\s*(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
    r"\s*(?:(Z)|([+-])(\d{2})'?(?:(\d{2})'?)?)?"
)


def _pdf_date(raw: object) -> str | None:
    """ISO 8601 from a PDF date string ("D:20230115093000+01'00'"), tolerating broken ones."""
    if raw is None:
        return None
    text = str(raw).strip()
    m = None if re.match(r"\d{4}-", text) else _PDF_DATE_RE.match(text)
    if m:
        y = int(m.group(1))  # the four-digit year always matched
        mo, d, h, mi, s = (int(g) if g else None for g in m.groups()[1:6])
        tz = None
        if m.group(7):
            tz = _dt.timezone.utc
        elif m.group(8):
            hours, minutes = int(m.group(9)), int(m.group(10) or 0)
            if hours <= 23 and minutes <= 59:
                delta = _dt.timedelta(hours=hours, minutes=minutes)
                tz = _dt.timezone(delta if m.group(8) == "+" else -delta)
        try:
            value = _dt.datetime(y, mo or 1, d or 1, h or 0, mi or 0, s or 0, tzinfo=tz)
        except (ValueError, OverflowError):
            try:  # a bad time of day: keep the date
                return _dt.date(y, mo or 1, d or 1).isoformat()
            except (ValueError, OverflowError):
                return None
        if h is None:
            return value.date().isoformat()
        return value.isoformat()
    return _iso_date(text)


def _count_visible(texts: Iterable[str], enough: int) -> int:
    """Non-whitespace characters in `texts` (CJK ones count 3: a few of them are words), the
    count stopping once `enough` is reached."""
    n = 0
    for text in texts:
        visible = len(text) - sum(text.count(c) for c in " \n\t\r\x0c\x0b\xa0")
        if visible and n + 3 * visible >= enough and n + visible < enough:
            visible = sum(3 if ord(c) >= 0x2E80 else 1 for c in text if not c.isspace())
        n += visible
        if n >= enough:
            break
    return n
