"""PDF, read with pypdf: one `Page` per PDF page (1-based, in file order, empty pages kept so the
numbers stay right). Encrypted files open with the empty password or the one given; a page that
fails to extract is left empty rather than losing the document; a file with almost no text is a
scan (`Problem.NO_TEXT`). Title, author, dates, producer and creator come from the info dictionary.
"""

from __future__ import annotations

import datetime as _dt
import io
import logging
import re
import warnings
from collections.abc import Iterable
from pathlib import Path

from edgechat.core.documents.common import _choose_title, _describe, _iso_date, _put, _safe
from edgechat.core.records import Document, DocumentError, Page, Problem

# pypdf reports every robustness fix it applies through its logger (and a few through warnings);
# on real-world files that is a lot of noise and none of it is actionable for a person.
_pypdf_logger = logging.getLogger("pypdf")
_pypdf_logger.addHandler(logging.NullHandler())
_pypdf_logger.propagate = False
_pypdf_logger.setLevel(logging.CRITICAL + 1)
warnings.filterwarnings("ignore", module=r"pypdf(\.|$)")

MIN_PDF_TEXT = 20  # fewer non-whitespace characters than this in a whole PDF: no text layer


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


def _parse_pdf(path: Path, data: bytes, password: str | None) -> Document:
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

    metadata: dict[str, str] = {}
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
        except Exception as exc:  # one broken page must not lose the rest of the document
            failures += 1
            first_failure = first_failure or _describe(exc)
            text = ""
        pages.append(Page(index + 1, text))

    if failures == count:
        raise DocumentError(Problem.MALFORMED, f"no page could be read: {first_failure}")
    if _count_visible((p.text for p in pages), MIN_PDF_TEXT) < MIN_PDF_TEXT:
        raise DocumentError(Problem.NO_TEXT, "no text layer (a scan or images only?)")

    info = None
    try:
        info = reader.metadata
    except Exception:
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
    return Document(str(path), _choose_title(path, _pdf_string(title)), "pdf", pages, metadata)


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
