"""Turning a file into text: PDF, plain text, Markdown, HTML, DOCX and EPUB.

`parse_document(path)` returns a `Document` whose `pages` are PDF pages (1-based, in file order,
empty pages kept so numbers stay right) or, for every other format, sections ("section n"). Every
failure is a `DocumentError` carrying a `Problem`; nothing else escapes.

Page texts are final: chunk offsets index into `Page.text`, so nothing here (or downstream) may
rewrite a page's text after the `Page` is made. For plain text and Markdown each section is an
exact slice of the decoded file, and the sections joined give the decoded file back.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import io
import logging
import os
import re
import stat
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from edgechat.core.records import Document, DocumentError, Page, Problem

__all__ = ["SUPPORTED_SUFFIXES", "SECTION_CHARS", "is_supported", "parse_document"]

# pypdf reports every robustness fix it applies through its logger (and a few through warnings);
# on real-world files that is a lot of noise and none of it is actionable for a person.
_pypdf_logger = logging.getLogger("pypdf")
_pypdf_logger.addHandler(logging.NullHandler())
_pypdf_logger.propagate = False
_pypdf_logger.setLevel(logging.CRITICAL + 1)
warnings.filterwarnings("ignore", module=r"pypdf(\.|$)")
warnings.filterwarnings("ignore", module=r"ebooklib(\.|$)")
# BeautifulSoup's advice ("looks like XML", "looks like a file name") is reported against the
# caller, this module; the filters are global and set once because catch_warnings is not
# thread-safe and documents are parsed in worker threads.
warnings.filterwarnings("ignore", module=re.escape(__name__) + "$")

_PDF = {".pdf"}
_TEXT = {".txt", ".text", ".rst", ".log"}
_MARKDOWN = {".md", ".markdown"}
_HTML = {".html", ".htm", ".xhtml"}
_DOCX = {".docx"}
_EPUB = {".epub"}

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(_PDF | _TEXT | _MARKDOWN | _HTML | _DOCX | _EPUB)

SECTION_CHARS = 4000  # target size of a section when a file has no usable headings
MIN_PDF_TEXT = 20  # fewer non-whitespace characters than this in a whole PDF: no text layer


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
        raise DocumentError(Problem.UNSUPPORTED, f"'{suffix or p.name}' files are not read")
    except DocumentError:
        raise
    except RecursionError:
        raise DocumentError(Problem.MALFORMED, "structure nested too deeply") from None
    except Exception as exc:  # anything a parser throws on a broken file
        raise DocumentError(Problem.MALFORMED, _describe(exc)) from exc


# --------------------------------------------------------------------------- reading


def _describe(exc: BaseException) -> str:
    msg = str(exc).strip()
    if not msg:
        return type(exc).__name__
    return msg if len(msg) <= 300 else msg[:297] + "..."


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


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def _check_zip_size(data: bytes, max_bytes: int) -> None:
    """A zip (DOCX, EPUB) that unpacks to far more than the size limit is refused, not unpacked."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            total = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        raise DocumentError(Problem.MALFORMED, f"not a valid zip container ({_describe(exc)})") from None
    if total > 4 * max_bytes:
        raise DocumentError(Problem.TOO_LARGE, f"unpacks to {_mb(total)}")


# --------------------------------------------------------------------------- titles and dates

_JUNK_TITLES = {
    "untitled", "untitled document", "no title", "notitle", "title", "document", "doc", "none",
    "null", "unknown", "default", "new document", "slide 1", "presentation", "(anonymous)",
    "anonymous", "microsoft word", "word document", "pdf", "blank", "book", "index", "home",
    "page", "-", "n/a", "na",
}
_JUNK_TITLE_RE = re.compile(
    r"^(?:microsoft\s*(?:word|powerpoint|excel|office)|msword|powerpoint|word)\s*-"  # MS print drivers
    r"|\.(?:docx?|dotx?|rtf|odt|pdf|txt|tex|dvi|e?ps|indd|qxd|pptx?|xlsx?|html?|wpd|pages|ai|psd"
    r"|jpe?g|png|tiff?|md)$"  # a file name
    r"|^(?:document|doc|untitled|presentation|book|slide|microsoft word)[\s_-]*\d+$",
    re.IGNORECASE,
)


def _clean_title(title: object) -> str:
    if title is None:
        return ""
    text = " ".join(str(title).replace("\x00", "").split())
    return text if len(text) <= 300 else text[:297].rstrip() + "..."


def _meaningful(title: object) -> str | None:
    """The title cleaned if a person would accept it as a document's name, else None."""
    text = _clean_title(title)
    low = text.lower().strip(" .-_:")
    if not low or not any(c.isalnum() for c in low):
        return None
    if low in _JUNK_TITLES or _JUNK_TITLE_RE.search(low):
        return None
    return text


def _choose_title(path: Path, *candidates: object) -> str:
    """The first meaningful candidate (metadata title, then first heading), else the file name.
    A candidate that only repeats the file name gives way to the next one."""
    stem = path.stem or path.name
    fallback = None

    def key(s: str) -> str:
        return re.sub(r"[\s_\-.]+", " ", s).strip().lower()

    for candidate in candidates:
        title = _meaningful(candidate)
        if title and key(title) != key(stem):
            return title
        fallback = fallback or title
    return fallback or stem


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
        y, mo, d, h, mi, s = (int(g) if g else None for g in m.groups()[:6])
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


def _iso_date(raw: object) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, (_dt.datetime, _dt.date)):
        return raw.isoformat()
    text = str(raw).strip()
    if not text:
        return None
    try:
        return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        pass
    m = re.match(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", text)
    if m:
        try:
            return _dt.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)).isoformat()[
                : 4 + (3 if m.group(2) else 0) + (3 if m.group(3) else 0)
            ]
        except ValueError:
            return None
    return None


def _put(metadata: dict[str, str], key: str, value: object) -> None:
    if value is None:
        return
    text = " ".join(str(value).replace("\x00", "").split())
    if text:
        metadata[key] = text


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


# --------------------------------------------------------------------------- PDF


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


def _safe(get: Callable[[], object]) -> object:
    try:
        value = get()
        if value is not None and hasattr(value, "get_object"):
            value = value.get_object()
        return value
    except Exception:
        return None


def _pdf_string(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("latin-1", "replace")
    return _clean_pdf_text(str(value))


# --------------------------------------------------------------------------- plain text, Markdown

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def _decode(data: bytes) -> tuple[str, str]:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, "replace"), encoding
    sample = data[:8192]
    if b"\x00" in sample:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if odd > len(sample) // 4 and even == 0:
            return data.decode("utf-16-le", "replace"), "utf-16-le"
        if even > len(sample) // 4 and odd == 0:
            return data.decode("utf-16-be", "replace"), "utf-16-be"
        raise DocumentError(Problem.MALFORMED, "binary data, not text")
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            pass
    return data.decode("latin-1"), "latin-1"


_PARA_BREAK_RE = re.compile(r"\n[ \t\r\f\v]*\n\s*")


def _split_sizes(text: str, start: int, end: int, target: int, breaks: list[int]) -> list[int]:
    """Cut offsets inside text[start:end] giving pieces of about `target` characters, each cut
    at a paragraph boundary when there is one near (then a line end, then a space)."""
    cuts: list[int] = []
    pos = start
    limit = target + target // 2
    while end - pos > limit:
        lo, hi = pos + target // 2, pos + target
        cut = -1
        i = bisect.bisect_right(breaks, hi) - 1
        if i >= 0 and breaks[i] > lo:
            cut = breaks[i]
        else:
            j = bisect.bisect_right(breaks, hi)
            if j < len(breaks) and breaks[j] <= pos + limit and breaks[j] < end:
                cut = breaks[j]
        if cut < 0:
            nl = text.rfind("\n", lo, hi)
            if nl >= 0:
                cut = nl + 1
        if cut < 0:
            for k in range(hi, lo, -1):
                if text[k - 1].isspace():
                    cut = k
                    break
        if cut < 0:
            cut = hi
        cuts.append(cut)
        pos = cut
    return cuts


def _slices(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _markdown_headings(text: str, body_start: int) -> list[tuple[int, int, int, str]]:
    """(start, end of the heading line(s), level, heading text) for each heading outside code."""
    headings: list[tuple[int, int, int, str]] = []
    fence: str | None = None
    prev: tuple[int, str] | None = None  # previous line if it could be a setext heading's text
    pos = body_start
    for line in text[body_start:].splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        content = line.rstrip("\r\n")
        m = _FENCE_RE.match(content)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not content.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        if m:
            fence, prev = m.group(1), None
            continue
        atx = _ATX_RE.match(content)
        if atx:
            title = re.sub(r"(?:^|[ \t]+)#+$", "", atx.group(2) or "").strip()
            headings.append((start, pos, len(atx.group(1)), title))
            prev = None
            continue
        setext = _SETEXT_RE.match(content)
        if setext and prev is not None:
            level = 1 if setext.group(1)[0] == "=" else 2
            headings.append((prev[0], pos, level, prev[1].strip()))
            prev = None
            continue
        stripped = content.strip()
        indented = content.startswith("    ") or content.startswith("\t")
        if stripped and not indented and not stripped.startswith(("|", ">", "-", "*", "+", "<")):
            prev = (start, stripped)
        else:
            prev = None
    return headings


def _front_matter(text: str) -> tuple[int, str | None]:
    """End offset of a YAML front matter block at the top of a Markdown file, and its title."""
    if not text.startswith("---"):
        return 0, None
    m = re.match(r"---[ \t]*\r?\n(.*?\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|$)", text, re.DOTALL)
    if not m:
        return 0, None
    t = re.search(r"^title:[ \t]*(.+?)[ \t]*$", m.group(1), re.MULTILINE)
    title = t.group(1).strip().strip("'\"") if t else None
    return m.end(), title


_INLINE_MD_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|[*_`]{1,3}|\\(?=[^\w\s])|<[^>]+>")


def _plain_heading(text: str) -> str:
    return _INLINE_MD_RE.sub(lambda m: m.group(1) or "", text).strip()


def _rst_title(text: str) -> str | None:
    lines = text[:20000].splitlines()
    for i in range(len(lines) - 1):
        title, under = lines[i].strip(), lines[i + 1].strip()
        if title and under and len(set(under)) == 1 and under[0] in "=-~#*^+\"'`:." \
                and len(under) >= len(title) and len(under) >= 3 and title[0] not in "=-~#*^+":
            return title
    return None


def _parse_text(path: Path, data: bytes, *, markdown: bool) -> Document:
    text, encoding = _decode(data)
    if not text.strip():
        raise DocumentError(Problem.EMPTY, "only whitespace")
    breaks = [m.end() for m in _PARA_BREAK_RE.finditer(text)]
    metadata = {"encoding": encoding}

    if not markdown:
        title = _rst_title(text) if path.suffix.lower() == ".rst" else None
        pieces = _slices(text, _split_sizes(text, 0, len(text), SECTION_CHARS, breaks))
        return _text_document(path, _choose_title(path, title), "text", pieces, metadata)

    body_start, fm_title = _front_matter(text)
    headings = _markdown_headings(text, body_start)
    first_h1 = next((_plain_heading(h[3]) for h in headings if h[2] == 1 and h[3].strip()), None)
    title = _choose_title(path, fm_title, first_h1)

    counts = Counter(level for _, _, level, _ in headings)
    split_level = min((lvl for lvl, n in counts.items() if n >= 2), default=0)
    # Sections start at headings of the top level that repeats (and at any heading above it);
    # a section holding nothing but its heading (or the front matter) joins the next one.
    sections = [(s, e) for s, e, level, _ in headings if level <= split_level]
    if not sections or sections[0][0] > 0:
        sections.insert(0, (0, body_start))
    cuts: list[int] = []
    seg_start = 0
    for i, (_, head_end) in enumerate(sections):
        last = i + 1 == len(sections)
        end = len(text) if last else sections[i + 1][0]
        if not last and not text[head_end:end].strip():
            continue
        cuts.extend(_split_sizes(text, seg_start, end, SECTION_CHARS, breaks))
        if not last:
            cuts.append(end)
        seg_start = end
    pieces = _slices(text, sorted(set(c for c in cuts if 0 < c < len(text))))
    return _text_document(path, title, "markdown", pieces, metadata)


def _text_document(path: Path, title: str, fmt: str, pieces: list[str], metadata: dict[str, str]) -> Document:
    pages = [Page(i + 1, piece) for i, piece in enumerate(pieces)]
    metadata["sections"] = str(len(pages))
    return Document(str(path), title, fmt, pages, metadata)


# --------------------------------------------------------------------------- HTML

_DROP_TAGS = frozenset({
    "script", "style", "nav", "noscript", "template", "head", "svg", "iframe", "object", "embed",
    "canvas", "select", "button", "map", "audio", "video",
})
_BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main",
    "menu", "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "ul", "tr",
    "option", "frameset", "noframes",
})
_SECTION_TAGS = frozenset({"h1", "h2"})
_WS_RE = re.compile(r"\s+")


class _HtmlText:
    """Block-aware text of an HTML tree, split into sections at h1/h2."""

    def __init__(self) -> None:
        self.sections: list[list[tuple[str, str]]] = [[]]  # (kind, text) blocks
        self.buf: list[str] = []
        self.pre = 0
        self.row_cells = 0
        self.kind = "block"

    def flush(self) -> None:
        if not self.buf:
            return
        raw = "".join(self.buf)
        self.buf.clear()
        if self.pre:
            text = raw.strip("\n").rstrip()
        else:
            text = "\n".join(" ".join(line.split()) for line in raw.split("\n")).strip("\n")
            text = re.sub(r"\n{2,}", "\n", text)
        if text.strip():
            self.sections[-1].append((self.kind, text))

    def walk(self, root: object) -> list[str]:
        from bs4.element import CData, NavigableString, PreformattedString, Tag

        stack: list[tuple[object, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if isinstance(node, Tag):
                name = (node.name or "").lower()
                if leaving:
                    self.leave(name)
                    continue
                if name in _DROP_TAGS:
                    continue
                self.enter(name)
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.contents))
            elif isinstance(node, NavigableString):
                if isinstance(node, PreformattedString) and not isinstance(node, CData):
                    continue  # comments, doctype, processing instructions
                s = str(node)
                self.buf.append(s if self.pre else _WS_RE.sub(" ", s))
        self.flush()
        out = []
        for blocks in self.sections:
            parts: list[str] = []
            prev_kind = ""
            for kind, text in blocks:
                if parts:
                    parts.append("\n" if kind == prev_kind and kind in ("row", "item") else "\n\n")
                parts.append(text)
                prev_kind = kind
            out.append("".join(parts))
        return out

    def enter(self, name: str) -> None:
        if name == "br":
            self.buf.append("\n")
        elif name == "pre":
            self.flush()
            self.pre += 1
            self.kind = "block"
        elif name in ("td", "th"):
            if self.row_cells:
                self.buf.append(" | ")
            self.row_cells += 1
        elif name in _BLOCK_TAGS and not self.pre:
            self.flush()
            if name in _SECTION_TAGS and self.sections[-1]:
                self.sections.append([])
            self.kind = "row" if name == "tr" else "item" if name == "li" else "block"
            if name == "tr":
                self.row_cells = 0

    def leave(self, name: str) -> None:
        if name == "pre":
            self.flush()
            self.pre = max(0, self.pre - 1)
            self.kind = "block"
        elif name in _BLOCK_TAGS and not self.pre:
            self.flush()
            self.kind = "block"


def _soup(data: bytes | str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(data, "lxml")


def _html_sections(soup) -> list[str]:
    root = soup.body or soup
    return _HtmlText().walk(root)


def _first_h1(soup) -> str | None:
    h1 = soup.find("h1")
    return h1.get_text(" ", strip=True) if h1 is not None else None


def _parse_html(path: Path, data: bytes) -> Document:
    soup = _soup(data)
    title_tag = soup.find("title")
    title = _choose_title(
        path, title_tag.get_text(" ", strip=True) if title_tag is not None else None, _first_h1(soup)
    )
    sections = [s for s in _html_sections(soup) if s.strip()]
    if not sections:
        raise DocumentError(Problem.NO_TEXT, "the page has no text")
    pieces = _resize(sections)
    pages = [Page(i + 1, text) for i, text in enumerate(pieces)]
    metadata: dict[str, str] = {"sections": str(len(pages))}
    for name, key in (("author", "author"), ("dcterms.created", "created"), ("dcterms.modified", "modified")):
        tag = soup.find("meta", attrs={"name": name})
        if tag is not None and tag.get("content"):
            _put(metadata, key, _iso_date(tag["content"]) if key != "author" else tag["content"])
    return Document(str(path), title, "html", pages, metadata)


def _resize(sections: list[str]) -> list[str]:
    """Sections longer than about 1.5 x SECTION_CHARS are cut at paragraph boundaries."""
    out: list[str] = []
    for text in sections:
        if len(text) <= SECTION_CHARS + SECTION_CHARS // 2:
            out.append(text)
            continue
        breaks = [m.end() for m in _PARA_BREAK_RE.finditer(text)]
        for piece in _slices(text, _split_sizes(text, 0, len(text), SECTION_CHARS, breaks)):
            piece = piece.strip()
            if piece:
                out.append(piece)
    return out


# --------------------------------------------------------------------------- DOCX


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""
    return tag[tag.rfind("}") + 1:]


def _val(el) -> str | None:
    for key, value in el.attrib.items():
        if key == "val" or key.endswith("}val"):
            return value
    return None


def _child(el, name: str):
    for c in el:
        if _local(c.tag) == name:
            return c
    return None


_SKIP_IN_PARAGRAPH = frozenset({
    "pPr", "rPr", "Fallback", "del", "moveFrom", "delText", "instrText", "fldData", "sectPr",
    "tblPr", "tcPr", "trPr", "tblGrid", "footnoteReference", "endnoteReference", "commentReference",
})


def _paragraph_text(p) -> str:
    out: list[str] = []
    stack = [iter(p)]
    while stack:
        el = next(stack[-1], None)
        if el is None:
            stack.pop()
            continue
        name = _local(el.tag)
        if not name or name in _SKIP_IN_PARAGRAPH:
            continue
        if name == "t":
            if el.text:
                out.append(el.text)
        elif name == "tab":
            out.append("\t")
        elif name in ("br", "cr"):
            out.append("\n")
        elif name == "noBreakHyphen":
            out.append("-")
        elif name == "p":  # a paragraph inside a text box
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            stack.append(iter(el))
        elif name == "tc":
            if out and not out[-1].endswith(("\n", " | ")):
                out.append(" | ")
            stack.append(iter(el))
        else:
            stack.append(iter(el))
    return "".join(out).strip()


class _DocxStyles:
    def __init__(self, root) -> None:
        self.levels: dict[str, int | None] = {}
        self.raw: dict[str, tuple[str, int | None, str | None]] = {}
        for style in root if root is not None else ():
            if _local(style.tag) != "style":
                continue
            sid = next((v for k, v in style.attrib.items() if k.endswith("styleId")), None)
            if not sid:
                continue
            name_el, based_el = _child(style, "name"), _child(style, "basedOn")
            ppr = _child(style, "pPr")
            outline = _child(ppr, "outlineLvl") if ppr is not None else None
            self.raw[sid] = (
                (_val(name_el) or "") if name_el is not None else "",
                _int(_val(outline)) if outline is not None else None,
                _val(based_el) if based_el is not None else None,
            )

    def level(self, sid: str | None) -> int | None:
        if not sid:
            return None
        if sid in self.levels:
            return self.levels[sid]
        level = None
        seen = set()
        current: str | None = sid
        while current and current not in seen and current in self.raw:
            seen.add(current)
            name, outline, based = self.raw[current]
            level = _heading_level_from_name(name) if name else None
            if level is None and current == sid:
                level = _heading_level_from_name(current)
            if level is None and outline is not None and 0 <= outline < 9:
                level = outline + 1
            if level is not None:
                break
            current = based
        if level is None and sid not in self.raw:
            level = _heading_level_from_name(sid)
        self.levels[sid] = level
        return level


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _heading_level_from_name(name: str) -> int | None:
    low = name.lower().replace(" ", "")
    if low == "title":
        return 0
    m = re.fullmatch(r"heading(\d)", low)
    return int(m.group(1)) if m else None


def _docx_blocks(container, styles: _DocxStyles, out: list[tuple[str, int | None]]) -> None:
    for el in container:
        name = _local(el.tag)
        if name == "p":
            text = _paragraph_text(el)
            if not text:
                continue
            level = None
            ppr = _child(el, "pPr")
            if ppr is not None:
                pstyle = _child(ppr, "pStyle")
                level = styles.level(_val(pstyle)) if pstyle is not None else None
                outline = _child(ppr, "outlineLvl")
                if level is None and outline is not None:
                    lvl = _int(_val(outline))
                    level = lvl + 1 if lvl is not None and 0 <= lvl < 9 else None
            out.append((text, level))
        elif name == "tbl":
            rows = _table_rows(el, styles)
            if rows:
                out.append(("\n".join(rows), None))
        elif name in ("sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag", "body"):
            _docx_blocks(el, styles, out)


def _table_rows(tbl, styles: _DocxStyles) -> list[str]:
    rows: list[str] = []
    for tr in _descend(tbl, "tr", ("sdt", "sdtContent", "customXml", "ins", "moveTo")):
        cells = []
        for tc in _descend(tr, "tc", ("sdt", "sdtContent", "customXml", "ins", "moveTo")):
            inner: list[tuple[str, int | None]] = []
            _docx_blocks(tc, styles, inner)
            cells.append(" ".join(" ".join(text.split()) for text, _ in inner))
        while cells and not cells[-1]:
            cells.pop()
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _descend(el, want: str, through: tuple[str, ...]):
    for c in el:
        name = _local(c.tag)
        if name == want:
            yield c
        elif name in through:
            yield from _descend(c, want, through)


def _parse_docx(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_zip_size(data, max_bytes)
    import docx

    core: dict[str, object] = {}
    try:
        doc = docx.Document(io.BytesIO(data))
    except (KeyError, ValueError) as exc:
        # python-docx reads only Transitional OOXML; Strict files (and odd packages) are read
        # straight from the zip with the same walker.
        body, styles_root, core = _docx_raw(data, exc)
    else:
        body = doc.element.body
        try:
            styles_root = doc.styles.element
        except Exception:
            styles_root = None
        try:
            cp = doc.core_properties
            for key in ("title", "author", "created", "modified"):
                core[key] = _safe(lambda key=key: getattr(cp, key))
        except Exception:
            pass
    blocks: list[tuple[str, int | None]] = []
    _docx_blocks(body, _DocxStyles(styles_root), blocks)
    if not any(text.strip() for text, _ in blocks):
        raise DocumentError(Problem.NO_TEXT, "the document has no text (pictures only?)")

    metadata: dict[str, str] = {}
    core_title = core.get("title")
    _put(metadata, "author", core.get("author"))
    _put(metadata, "created", _iso_date(core.get("created")))
    _put(metadata, "modified", _iso_date(core.get("modified")))
    first_heading = next((text for text, level in blocks if level is not None), None)
    title = _choose_title(path, core_title, first_heading)

    counts = Counter(level for _, level in blocks if level is not None and level >= 1)
    split_level = min((lvl for lvl, n in counts.items() if n >= 2), default=None)
    sections: list[list[tuple[str, int | None]]] = [[]]
    for text, level in blocks:
        if split_level is not None and level is not None and level <= split_level and sections[-1]:
            if all(lvl is not None and lvl <= split_level for _, lvl in sections[-1]):
                sections[-1].append((text, level))  # heading(s) only so far: keep together
                continue
            sections.append([])
        sections[-1].append((text, level))
    texts = _resize(["\n\n".join(text for text, _ in section) for section in sections if section])
    pages = [Page(i + 1, text) for i, text in enumerate(texts)]
    metadata["sections"] = str(len(pages))
    return Document(str(path), title, "docx", pages, metadata)


def _docx_raw(data: bytes, error: Exception):
    """(body element, styles root, core properties) of a Word file python-docx refused."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())

        def part(name: str | None):
            if not name or name not in names:
                return None
            return etree.fromstring(zf.read(name), parser)

        def rels(source: str) -> dict[str, str]:
            folder, _, base = source.rpartition("/")
            root = part(f"{folder}/_rels/{base}.rels" if folder else f"_rels/{base}.rels")
            found: dict[str, str] = {}
            for rel in root if root is not None else ():
                kind, target = rel.get("Type", ""), rel.get("Target", "")
                if rel.get("TargetMode") == "External" or not target:
                    continue
                target = target.lstrip("/") if target.startswith("/") else \
                    "/".join(x for x in (folder, target) if x)
                found.setdefault(kind.rsplit("/", 1)[-1], os.path.normpath(target).replace(os.sep, "/"))
            return found

        main = rels("").get("officeDocument") if "_rels/.rels" in names else None
        root = part(main or "word/document.xml")
        if root is None:
            raise DocumentError(Problem.MALFORMED, f"not a Word document: {_describe(error)}")
        body = next((c for c in root if _local(c.tag) == "body"), None)
        if body is None:
            raise DocumentError(Problem.MALFORMED, "the Word document has no body")
        styles = part(rels(main or "word/document.xml").get("styles"))
        core: dict[str, object] = {}
        props = part(rels("").get("core-properties") if "_rels/.rels" in names else None)
        for el in props if props is not None else ():
            key = {"title": "title", "creator": "author", "created": "created", "modified": "modified"}.get(
                _local(el.tag))
            if key and el.text:
                core[key] = el.text.strip()
    return body, styles, core


# --------------------------------------------------------------------------- EPUB

_HTML_MEDIA = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")


def _parse_epub(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_zip_size(data, max_bytes)
    import ebooklib
    from ebooklib import epub

    try:
        book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})
    except (epub.EpubException, KeyError) as exc:
        raise DocumentError(Problem.MALFORMED, f"not a valid EPUB: {_describe(exc)}") from None

    items = []
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, (tuple, list)) else entry
        item = book.get_item_with_id(idref)
        if item is not None:
            items.append(item)
    if not items:
        items = list(book.get_items_of_type(ebooklib.ITEM_DOCUMENT))

    pages: list[Page] = []
    first_h1 = None
    for item in items:
        text = ""
        media = (getattr(item, "media_type", "") or "").lower()
        if media in _HTML_MEDIA or isinstance(item, epub.EpubHtml):
            content = item.get_content()
            if content and content.strip():
                soup = _soup(content)
                if first_h1 is None:
                    first_h1 = _meaningful(_first_h1(soup))
                text = "\n\n".join(s for s in _html_sections(soup) if s.strip())
        pages.append(Page(len(pages) + 1, text))
    if not any(p.text.strip() for p in pages):
        raise DocumentError(Problem.NO_TEXT, "the book has no text")

    def dc(name: str) -> list[str]:
        try:
            values = book.get_metadata("DC", name)
        except Exception:
            return []
        return [str(v[0]).strip() for v in values if v and v[0] and str(v[0]).strip()]

    metadata: dict[str, str] = {}
    titles = dc("title")
    _put(metadata, "author", ", ".join(dict.fromkeys(dc("creator"))) or None)
    dates = dc("date")
    _put(metadata, "created", (_iso_date(dates[0]) or dates[0]) if dates else None)
    langs = dc("language")
    _put(metadata, "language", langs[0] if langs else None)
    publishers = dc("publisher")
    _put(metadata, "publisher", publishers[0] if publishers else None)
    metadata["sections"] = str(len(pages))
    title = _choose_title(path, titles[0] if titles else None, first_h1)
    return Document(str(path), title, "epub", pages, metadata)
