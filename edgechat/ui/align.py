"""Finding a cited passage in a page's text when the two were extracted differently.

A PDF indexed with PDFium (the reader since the pypdfium2 switch) has QtPdf's own character
offsets: `exact_span` checks that and takes them as they are. Otherwise (a PDF read by the
pypdf fallback, or indexed before) the texts differ:
pypdf (which indexed the passage) and QtPdf/pdfium (which shows the page) disagree on line ends,
spaces, ligatures and hyphens, so character offsets cannot be carried across. Both texts are
reduced to their letters and digits (NFKC, lower case), the passage is found in the page, and
the match is mapped back to the page's own character indices. Pure Python: no Qt.
"""

from __future__ import annotations

import unicodedata

from edgechat.core.engine import indexed_pdfium_text

__all__ = ["align_passage", "exact_span", "indexed_form", "normalized", "utf16_index"]

_ANCHORS = (80, 48, 32, 20, 12)


def normalized(text: str) -> tuple[str, list[int]]:
    """`text` reduced to lower-case letters and digits, with the index in `text` of each kept
    character."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            if ch.isalnum():
                out.append(ch.lower())
                index.append(i)
            continue
        for c in unicodedata.normalize("NFKC", ch):
            if c.isalnum():
                out.append(c.lower())
                index.append(i)
    return "".join(out), index


def align_passage(page_text: str, passage: str, *, hint: int | None = None) -> tuple[int, int] | None:
    """The span ``(start, end)`` of `passage` in `page_text`, ignoring whitespace, punctuation,
    case and ligatures; None when it cannot be placed.

    An exact match of the reduced texts is used when there is one (the one nearest `hint`, a
    position in `page_text`, if it occurs more than once). Otherwise the passage's start and
    end are placed separately by shorter and shorter anchors taken from its beginning and end.
    """
    page_n, page_idx = normalized(page_text)
    pas_n, _ = normalized(passage)
    if not pas_n or not page_n:
        return None

    # Punctuation the passage starts or ends with (a final ".") is taken along when the page
    # has it right there.
    stripped = passage.strip()
    lead = len(stripped) - len(stripped.lstrip("".join(c for c in stripped[:4] if not c.isalnum())))
    trail = len(stripped) - len(stripped.rstrip("".join(c for c in stripped[-4:] if not c.isalnum())))

    def span(a: int, b: int) -> tuple[int, int]:
        start, end = page_idx[a], page_idx[b - 1] + 1
        for _ in range(trail):
            if end < len(page_text) and not page_text[end].isalnum() and not page_text[end].isspace():
                end += 1
        for _ in range(lead):
            if start > 0 and not page_text[start - 1].isalnum() and not page_text[start - 1].isspace():
                start -= 1
        return start, end

    hits = _find_all(page_n, pas_n)
    if hits:
        best = hits[0] if hint is None else min(hits, key=lambda h: abs(page_idx[h] - hint))
        return span(best, best + len(pas_n))

    n = len(pas_n)
    for size in _ANCHORS:
        if size * 2 > n and size != _ANCHORS[-1]:
            continue
        size = min(size, n)
        head, tail = pas_n[:size], pas_n[-size:]
        starts = _find_all(page_n, head)
        ends = [e + size for e in _find_all(page_n, tail)]
        pairs = [(s, e) for s in starts for e in ends if s < e <= s + int(n * 1.5) + 40]
        if pairs:
            s, e = min(pairs, key=lambda p: abs((p[1] - p[0]) - n))
            return span(s, e)
        if starts and size >= 20:
            s = starts[0]
            return span(s, min(len(page_n), s + n))
        if ends and size >= 20:
            e = ends[-1]
            return span(max(0, e - n), e)
    return None


def indexed_form(viewer_text: str) -> str:
    """QtPdf's page text as the indexer stores PDFium's (the indexer's own function, through the
    facade): same length, same offsets."""
    return indexed_pdfium_text(viewer_text)


def exact_span(viewer_text: str, passage: str, start: int, end: int) -> tuple[int, int] | None:
    """``(start, end)`` when the indexed offsets hold `passage` in the viewer's page text as they
    are (the page was indexed with PDFium, the engine QtPdf shows it with); None otherwise, and
    the passage is then placed by `align_passage`."""
    if not passage or end - start != len(passage) or not 0 <= start < end <= len(viewer_text):
        return None
    return (start, end) if indexed_form(viewer_text)[start:end] == passage else None


def utf16_index(text: str, index: int) -> int:
    """A Python index into `text` as a UTF-16 index (QtPdf counts characters outside the Basic
    Multilingual Plane twice)."""
    return index + sum(1 for c in text[:index] if ord(c) > 0xFFFF)


def _find_all(haystack: str, needle: str) -> list[int]:
    out = []
    i = haystack.find(needle)
    while i >= 0:
        out.append(i)
        i = haystack.find(needle, i + 1)
    return out
