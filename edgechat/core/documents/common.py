"""What the format parsers share: refusing zips that unpack too big, turning errors into short
messages, choosing a title a person would accept, ISO dates, metadata values, and cutting long
text into sections of about `SECTION_CHARS` characters at paragraph boundaries.

Imports no parser, so every parser can import it.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import io
import re
import zipfile
from collections.abc import Callable
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


def _check_zip_size(data: bytes, max_bytes: int) -> None:
    """A zip (DOCX, EPUB) that unpacks to far more than the size limit is refused, not unpacked.
    A size its compressed bytes cannot hold is a damaged header: malformed, not too large."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
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


# --------------------------------------------------------------------------- titles, dates, metadata

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


def _safe(get: Callable[[], object]) -> object:
    """get(), a pypdf indirect object resolved; None if either raises."""
    try:
        value = get()
        if value is not None and hasattr(value, "get_object"):
            value = value.get_object()
        return value
    except Exception:
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
