"""What the format parsers share: refusing zips that unpack too big (and Office files that are
not zips at all), turning errors into short messages, decoding text files, choosing a title a
person would accept, ISO dates, metadata values, table rows that keep their column names, and
cutting long text into sections: at headings, then at about `SECTION_CHARS` characters at
paragraph boundaries.

Imports no parser, so every parser can import it.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import io
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from edgechat.core.records import DocumentError, Problem

SECTION_CHARS = 4000  # target size of a section when a file has no usable headings

# --------------------------------------------------------------------------- errors and sizes


def _describe(exc: BaseException) -> str:
    msg = str(exc).strip()
    if not msg:
        return type(exc).__name__
    return msg if len(msg) <= 300 else msg[:297] + "..."


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


# Deflate cannot expand data more than about 1032 to 1 (a 258-byte match in two bits); stored
# entries not at all. A header claiming more than that is damaged, not a zip bomb.
_DEFLATE_MAX_RATIO = 1100


def _impossible_size(info: zipfile.ZipInfo) -> bool:
    if info.compress_type == zipfile.ZIP_STORED:
        return info.file_size > info.compress_size
    if info.compress_type == zipfile.ZIP_DEFLATED:
        return info.file_size > info.compress_size * _DEFLATE_MAX_RATIO + 1024
    return False  # bzip2, lzma: ratios can be far higher; the claim is believed


def _check_zip_size(data: bytes, max_bytes: int, kind: str | None = None) -> None:
    """A zip (DOCX, EPUB, PPTX, XLSX, ODT) that unpacks to far more than the size limit is
    refused, not unpacked. A size its compressed bytes cannot hold is a damaged header: malformed,
    not too large. `kind` ("PowerPoint file") names the format in the message for a non-zip."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        if kind:
            raise DocumentError(Problem.MALFORMED, f"not a valid {kind}: not a zip container "
                                                   f"({_describe(exc)})") from None
        raise DocumentError(Problem.MALFORMED, f"not a valid zip container ({_describe(exc)})") from None
    for info in infos:
        if _impossible_size(info):
            name = _clean_title(info.filename) or "?"
            raise DocumentError(
                Problem.MALFORMED,
                f"damaged zip container: entry '{name}' claims {_mb(info.file_size)} "
                f"from {info.compress_size} compressed bytes",
            )
    total = sum(info.file_size for info in infos)
    if total > 4 * max_bytes:
        raise DocumentError(Problem.TOO_LARGE, f"unpacks to {_mb(total)}")


_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # an OLE2 compound file: the old binary Office formats, and encrypted new ones
_OLD_FORMATS = {".docx": ".doc", ".pptx": ".ppt", ".xlsx": ".xls"}


def _core_properties(data: bytes) -> dict[str, str]:
    """Title, author, created and modified from an OOXML package's core properties part, read
    from the zip (python-pptx and openpyxl make up a title and "now" as dates when it is missing)."""
    from lxml import etree

    names = {"title": "title", "creator": "author", "created": "created", "modified": "modified"}
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    found: dict[str, str] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            target = "docProps/core.xml"
            rels = etree.fromstring(zf.read("_rels/.rels"), parser)
            for rel in rels:
                if str(rel.get("Type", "")).endswith("/core-properties"):
                    target = str(rel.get("Target", target)).lstrip("/")
            root = etree.fromstring(zf.read(target), parser)
    except Exception:  # noqa: BLE001 - no such part, or a damaged zip or XML (zipfile, zlib, lxml): no properties
        return found
    for el in root:
        tag = el.tag if isinstance(el.tag, str) else ""
        key = names.get(tag[tag.rfind("}") + 1:])
        if key and el.text and el.text.strip():
            found[key] = el.text.strip()
    return found


def _check_not_ole(path: Path, data: bytes) -> None:
    """A .docx/.pptx/.xlsx that is an OLE2 compound file, not a zip: either a password-protected
    Office file (the zip is encrypted inside an OLE container) or an old binary one (.doc, .ppt,
    .xls) with a new suffix. Neither can be read; the message says which, and what to do."""
    if not data.startswith(_OLE_MAGIC):
        return
    suffix = path.suffix.lower()
    if "EncryptedPackage".encode("utf-16-le") in data or "EncryptionInfo".encode("utf-16-le") in data:
        raise DocumentError(Problem.UNSUPPORTED, "encrypted Office file (password-protected): "
                                                 "save a copy without the password to index it")
    old = _OLD_FORMATS.get(suffix, "old binary")
    raise DocumentError(Problem.UNSUPPORTED, f"encrypted or old-format Office file (a {old} file named {suffix}): "
                                             f"save it again as {suffix} to index it")


# --------------------------------------------------------------------------- decoding text files

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def _decode(data: bytes) -> tuple[str, str]:
    """A text file's bytes as text, and the encoding: by BOM, then UTF-16 without one, then UTF-8,
    cp1252 and latin-1. Binary data (NUL bytes that are not UTF-16) is malformed."""
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


# --------------------------------------------------------------------------- titles, dates, metadata

_JUNK_TITLES = {
    "untitled", "untitled document", "no title", "notitle", "title", "document", "doc", "none",
    "null", "unknown", "default", "new document", "slide 1", "presentation", "(anonymous)",
    "anonymous", "microsoft word", "word document", "pdf", "blank", "book", "index", "home",
    "page", "-", "n/a", "na", "powerpoint presentation", "microsoft powerpoint presentation", "workbook",
    "spreadsheet", "sheet", "sheet1", "slide",
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


#: Metadata the parsers write about the reading of a file (how it was decoded, how many pages or
#: sections it has, which parser read it and what it could not): not what the document says of
#: itself, so not read when a question names a document (Store.describe_files).
READING_KEYS = frozenset({"delimiter", "encoding", "encrypted", "pages", "parser", "partly_read", "read_as",
                          "read_by_ocr", "recovered_objects", "rows", "sections", "sheets", "slides",
                          "unreadable_pages"})


def _put(metadata: dict[str, str], key: str, value: object) -> None:
    if value is None:
        return
    text = " ".join(str(value).replace("\x00", "").split())
    if text:
        metadata[key] = text


def _safe(get: Callable[[], object]) -> object:
    """get(), a pypdf indirect object resolved; None if either raises."""
    try:
        value = get()
        if value is not None and hasattr(value, "get_object"):
            value = value.get_object()
        return value
    except Exception:  # noqa: BLE001 - pypdf resolves lazily: a damaged object fails in many ways
        return None


# --------------------------------------------------------------------------- section sizing

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


def _heading_sections(blocks: Sequence[tuple[str, int | None]]) -> list[str]:
    """Sections of a document read as (text, heading level or None) blocks: a new one starts at
    each heading of the top level that repeats (and any above it), a heading with nothing under it
    yet stays with what follows; blocks joined by a blank line, long sections cut by size."""
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
    return _resize(["\n\n".join(text for text, _ in section) for section in sections if section])


# --------------------------------------------------------------------------- table rows

_NUMBER_RE = re.compile(r"^[-+\u2212(]?[$\u20ac\u00a3\u00a5]?\s?\d[\d,.\s']*%?\)?$")
_YEAR_RE = re.compile(r"^(?:1[89]|20|21)\d\d$")


def _cell(text: object) -> str:
    """A table cell's text on one line."""
    return " ".join(str(text).split()) if text is not None else ""


def _is_header_row(cells: Sequence[str], distinct: bool = True) -> bool:
    """Could this row name the columns under it: every filled cell a short label or a year (not
    another number), no two the same (unless not `distinct`: "Q1 Q2 Q1 Q2" under two years)."""
    filled = [c for c in cells if c]
    if not filled or distinct and len({c.lower() for c in filled}) < len(filled):
        return False
    return all(len(c) <= 80 and (_YEAR_RE.match(c) or not _NUMBER_RE.match(c)) for c in filled)


def _row_line(cells: Sequence[str], header: Sequence[str] | None) -> str:
    """One table row as one line, cells separated by " | ", each led by its column's name when
    there is a header ("Region: North | 2023: 1234"), so a row is found by the names of its
    columns wherever it stands. Empty cells are left out."""
    if not header:
        return " | ".join(c for c in cells if c)
    parts = []
    for i, value in enumerate(cells):
        if not value:
            continue
        name = header[i] if i < len(header) else ""
        parts.append(f"{name}: {value}" if name and name != value else value)
    return " | ".join(parts)


def _table_lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """A small table (a slide's, a text document's) as lines: the header row as it is, then every
    other row with its column names (`_row_line`) when the first row looks like a header."""
    rows = [list(r) for r in rows if any(r)]
    if not rows:
        return []
    header = rows[0] if len(rows) >= 2 and sum(1 for c in rows[0] if c) >= 2 and _is_header_row(rows[0]) else None
    if header is None:
        return [_row_line(r, None) for r in rows]
    return [_row_line(rows[0], None)] + [_row_line(r, header) for r in rows[1:]]
