"""Plain text (.txt, .text, .log, .rst) and Markdown, decoded by BOM, then UTF-16 without one, then
UTF-8, cp1252 and latin-1. Plain text is cut into sections of about `SECTION_CHARS` characters at
paragraph boundaries (an .rst file's underlined first title names it); Markdown is cut at its
top repeating heading level (YAML front matter and fenced code are respected), long sections
cut again by size.

Every section is an exact slice of the decoded file, and the sections joined give the decoded
file back: chunk offsets index into the page texts.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from edgechat.core.documents.common import (
    _PARA_BREAK_RE,
    SECTION_CHARS,
    _choose_title,
    _decode,
    _slices,
    _split_sizes,
)
from edgechat.core.documents.titles import page_title
from edgechat.core.records import Document, DocumentError, Page, Problem

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
        return _text_document(path, _choose_title(path, title, page_title(pieces[0] if pieces else "", path.stem)),
                              "text", pieces, metadata)

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
