"""What a chunk inherits from its document, for retrieval only: a short context header, and the
lines of a page that are boilerplate.

A passage from page 30 of a report does not say whose report it is; a row of a table
split across two windows does not say which columns its numbers are in. The header gives each
chunk what a reader would know from where it stands:

- the document: its file name, its title (when it says more than the file name) and its running
  header or footer (page number left out);
- the section heading path at the chunk's start (Part / Item / Note, numbered headings,
  Markdown headings, short upper-case captions), from detected heading lines;
- inside a table, the table's caption and column-header lines, when the chunk starts below them.

The header is embedded together with the chunk's text and indexed in its own FTS5 column; it is
never displayed: a chunk's text, span and highlight stay the page's text.

Boilerplate. Running headers and footers (a line that recurs at the top or bottom of many
pages), table-of-contents entries ("Item 2. Management's Discussion ... 15", dot leaders) and
index entries ("parse_args, 26, 28") are left out of the text that is embedded and indexed; a
window that is mostly such lines (a contents or index page) is not indexed at all, unless that
would leave the document with nothing.

Everything here is plain line heuristics over the parser's text: cheap (one pass per page) and
independent of any one kind of document.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_LABEL_CHARS = 160
# Keys of Document.metadata (stored with the file) that the retriever reads: the document's
# identity label (kept on what it returns: the answer's checks read whose document a passage is
# from) and its period's end date (removed).
LABEL_KEY = "retrieval_label"
MAX_SECTION_CHARS = 90
MAX_TABLE_CHARS = 160
# The most lines above a table's first row read as its headings at question time, and their
# characters (a chunk's context header takes fewer).
HEADING_LINES = 12
HEADING_CHARS = 300

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_LETTER_WORD = re.compile(r"[^\W\d_]{2,}")

# --------------------------------------------------------------------------- boilerplate lines

_LEADER = re.compile(r"(?:\.\s?){4,}|(?:\u2026\s?){2,}|(?:_\s?){6,}")
# A contents entry: words, then a page number (or roman numeral) at the end of a short line.
# Only the page number and a leading section number are figures: "www (http) 80 https 443" is a row.
_TOC_ENTRY = re.compile(
    r"^(?:(?:\d{1,2}(?:\.\d{1,2})*\.?|(?:item|part|chapter|section|note|appendix)\s+\w{1,4}[.:]?)\s+)?"
    r"[^\W\d_][^\d]{2,90}?[^\d,.$%\s]\s+\d{1,3}\s*$", re.IGNORECASE)
# An index entry: a term, a comma, page numbers ("parse_args, 26, 28", "factor, 12-14").
_INDEX_ENTRY = re.compile(r"^[^\d\s][^,]{0,60}?[^\d\s,],\s*\d{1,4}(?:\s*[,\u2013-]\s*\d{1,4})*\s*$")
_CONTENTS_TITLE = re.compile(r"^(?:table of )?contents$|^index$", re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 14)  # each line is asked about for its page and again for each window holding it
def norm_line(line: str) -> str:
    """A line as running headers/footers are compared: digits as '#', spaces collapsed, lower."""
    return _DIGITS.sub("#", _SPACE.sub(" ", line.strip().lower()))


def named_cells(line: str) -> bool:
    """A table row as the office parsers write it, cells led by their column's name ("Team: Blues
    | Location: STL | Cups: 1"): at least two named cells, at least half of them."""
    cells = line.split(" | ")
    named = sum(1 for c in cells if _NAMED_CELL.match(c))
    return named >= 2 and 2 * named >= len(cells)


_NAMED_CELL = re.compile(r"^[^:]{1,80}\S: \S")


def is_contents_line(line: str) -> bool:
    """A table-of-contents or index entry, or a dot-leader line. A row of named cells is not one,
    even when it ends in a small number."""
    return _is_contents(line.strip())


@functools.lru_cache(maxsize=8192)  # a line is asked about two or three times while its document is chunked
def _is_contents(s: str) -> bool:
    if not s:
        return False
    if _LEADER.search(s):
        return True
    if " | " in s and named_cells(s):
        return False
    if len(s.split()) <= 14 and _TOC_ENTRY.match(s):
        return True
    return bool(_INDEX_ENTRY.match(s)) and len(s.split()) <= 8


def running_lines(pages: Sequence[str], edge: int = 2) -> frozenset[str]:
    """Normalised lines that recur at the top or bottom (first/last `edge` non-blank lines) of
    at least 30 % of the pages with text (and 3 of them): running headers and footers. A bare
    page number is one too."""
    counts: Counter[str] = Counter()
    texts = [t for t in pages if t.strip()]
    if len(texts) < 4:
        return frozenset()
    for t in texts:
        lines = [ln for ln in t.splitlines() if ln.strip()]
        counts.update({norm_line(ln) for ln in lines[:edge] + lines[-edge:]})
    need = max(3, int(0.3 * len(texts) + 0.999))
    return frozenset(k for k, n in counts.items() if n >= need)


# --------------------------------------------------------------------------- document label

def _clean(s: str) -> str:
    return _SPACE.sub(" ", s).strip(" |-\u2013\u2014:;,")


def _meaningful(s: str | None) -> bool:
    return bool(s) and len(_LETTER_WORD.findall(s or "")) >= 1


_DIVISION = re.compile(r"^(?:chapter|section|part|appendix|item)\b|^\d+(?:\.\d+)*\s+[^\W\d]", re.IGNORECASE)


def running_label(pages: Sequence[str], running: frozenset[str]) -> str:
    """The most frequent running header/footer that says something (two words with letters;
    not a contents link, not a chapter's or section's own header), on at least half of the
    pages with text, as first written, page number stripped."""
    if not running:
        return ""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for t in pages:
        lines = [ln for ln in t.splitlines() if ln.strip()]
        for n in {norm_line(ln) for ln in lines[:2] + lines[-2:]}:
            if n in running:
                counts[n] += 1
        for ln in lines[:2] + lines[-2:]:
            first.setdefault(norm_line(ln), ln)
    keep = [n for n in counts
            if len(_LETTER_WORD.findall(n)) >= 2 and not _CONTENTS_TITLE.match(_clean(first[n]))
            and not _DIVISION.match(_clean(re.sub(r"^\s*\d{1,4}\s+(?=\D)", "", first[n])))]
    need = 0.5 * sum(1 for t in pages if t.strip())
    keep = [n for n in keep if counts[n] >= need]
    if not keep:
        return ""
    best = max(keep, key=lambda n: counts[n])
    text = re.sub(r"(?:(?<=[\s|])(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?)\s*$", "", first[best].strip(),
                  flags=re.IGNORECASE)
    text = re.sub(r"^\s*\d{1,4}\b", "", text)
    return _clean(text)


def _dedupe(parts: Sequence[str]) -> list[str]:
    out: list[str] = []
    for p in parts:
        key = _SPACE.sub(" ", p.lower())
        if not key or any(key in _SPACE.sub(" ", o.lower()) for o in out):
            continue
        out = [o for o in out if _SPACE.sub(" ", o.lower()) not in key]
        out.append(p)
    return out


def document_label(path: str, title: str, pages: Sequence[str], running: frozenset[str],
                   with_title: bool = True) -> str:
    """File name, title (`with_title`) and running label, " | " between."""
    name = re.sub(r"[_]+", " ", Path(path).stem).strip()
    parts = [name] if _meaningful(name) else []
    if with_title and _meaningful(title):
        parts.append(_clean(title))
    label = running_label(pages, running)
    if label:
        parts.append(label)
    text = " | ".join(_dedupe([p for p in parts if p]))
    return text[:MAX_LABEL_CHARS]


# --------------------------------------------------------------------------- headings

_PART = re.compile(r"^part\s+[ivx]+\b", re.IGNORECASE)
_ITEM = re.compile(r"^item\s+\d+[a-z]?\b", re.IGNORECASE)
_NOTE = re.compile(r"^note\s+\d+\b", re.IGNORECASE)
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\s+[A-Z][^\n]{2,70}$")
_MD = re.compile(r"^(#{1,6})\s+\S")


def heading_level(line: str, markdown: bool = False) -> int | None:
    """The level of a heading line (0 = top), or None for an ordinary line. `markdown`: '#'
    lines are headings (elsewhere they are comments in code)."""
    s = line.strip()
    if not s or len(s) > 100 or is_contents_line(s):
        return None
    m = _MD.match(s)
    if m:
        return len(m.group(1)) if markdown else None
    if _PART.match(s):
        return 0
    if _ITEM.match(s):
        return 1
    if _NOTE.match(s) and len(s.split()) <= 12:
        return 3
    m = _NUMBERED.match(s)
    if m and len(s.split()) <= 10 and not s.endswith((".", ",", ";")) and not _NUM_TOKEN.match(s.split()[-1]):
        return 1 + m.group(1).count(".")
    words = s.split()
    # the cheap tests first: most lines fail them, and counting letters is the dear one
    if (2 <= len(words) <= 10 and s.upper() == s and sum(ch.isalpha() for ch in s) >= 0.7 * len(s.replace(" ", ""))
            and len(_LETTER_WORD.findall(s)) >= 2 and not re.search(r"[$\\/=<>]", s)):
        return 4  # an upper-case caption
    return None


# --------------------------------------------------------------------------- tables

_NUM_TOKEN = re.compile(r"^\(?[$\u20ac\u00a3]?\(?[-\u2013\u2014]?\d[\d,]*(?:\.\d+)?\)?%?\)?$|^[\u2014\u2013-]$|^\$$|^%$")
_SENTENCE_END = re.compile(r"[.!?]$")


_MONTH_RE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_NUMERIC_CHAR = re.compile(r"[\d\u2013\u2014-]")  # what every numeric cell (_NUM_TOKEN) holds


def is_row(line: str) -> bool:
    """A table row: at least two numeric cells, or a label ending in one formatted number.
    Column headers of dates or years ("March 31, 2024 March 31, 2023", "2024 2023") are not."""
    if not _NUMERIC_CHAR.search(line):  # no digit nor dash: no numeric cell (most lines of prose)
        return False
    toks = line.split()
    if _MONTH_RE.search(line):
        return False
    nums = [t for t in toks if _NUM_TOKEN.match(t) and t not in ("$", "%")]
    if nums and all(_YEAR.match(t) for t in nums):
        return False
    n = len(nums)
    if n >= 2:
        return True
    if n == 1 and len(toks) >= 2 and _NUM_TOKEN.match(toks[-1]) and re.search(r"[,.$%()]", toks[-1] + toks[-2]):
        return not is_contents_line(line)
    return False


@dataclass
class Table:
    start: int  # char offset of the first header line (or first row)
    body: int  # char offset of the first row
    end: int  # char offset just after the last row
    header: str  # caption and column-header lines, one line


def find_tables(text: str, min_rows: int = 3, head_lines: int = 6, max_chars: int = MAX_TABLE_CHARS) -> list[Table]:
    """Runs of table rows (label-only lines of up to 2 allowed between rows), with the short
    lines just above the first row (up to `head_lines` of them, `max_chars` in all) as the
    table's header."""
    lines: list[tuple[int, int, str]] = []
    pos = 0
    for ln in text.splitlines(keepends=True):
        lines.append((pos, pos + len(ln.rstrip("\r\n")), ln.strip()))
        pos += len(ln)
    tables: list[Table] = []
    i, n = 0, len(lines)
    while i < n:
        if not is_row(lines[i][2]):
            i += 1
            continue
        first = i
        last = i
        rows = 1
        j = i + 1
        gap = 0
        while j < n:
            s = lines[j][2]
            if is_row(s):
                rows += 1
                last = j
                gap = 0
            elif s and len(s.split()) <= 10 and not _SENTENCE_END.search(s) and gap < 2:
                gap += 1
            else:
                break
            j += 1
        if rows >= min_rows:
            head: list[str] = []
            k = first - 1
            while k >= 0 and len(head) < head_lines:
                s = lines[k][2]
                words = len(s.split())
                if not s or _SENTENCE_END.search(s) and not s.startswith("(") or words > (24 if s.startswith("(") else 12):
                    break
                head.insert(0, s)
                k -= 1
            start = lines[k + 1][0] if head else lines[first][0]
            header = _clean(" ".join(head))[:max_chars]
            tables.append(Table(start, lines[first][0], lines[last][1], header))
        i = last + 1
    return tables


# --------------------------------------------------------------------------- per document


@dataclass
class DocumentContext:
    """What the chunker needs to give a document's chunks their headers."""

    label: str
    running: frozenset[str] = frozenset()
    identity: str = ""  # the label without the title: what names this document among others
    # per page number: (char offset, level, heading text) in page order
    headings: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)
    # the heading path in force at the start of each page
    page_path: dict[int, list[tuple[int, str]]] = field(default_factory=dict)

    def section_at(self, page: int, offset: int) -> str:
        path = list(self.page_path.get(page, []))
        for off, level, text in self.headings.get(page, []):
            if off > offset:
                break
            path = [p for p in path if p[0] < level] + [(level, text)]
        names = [t for _, t in path]
        while len(names) > 1 and len(" > ".join(names)) > MAX_SECTION_CHARS:
            names.pop(0)  # the innermost headings say the most
        return " > ".join(names)[:MAX_SECTION_CHARS]


def document_context(path: str, title: str, pages: Sequence[tuple[int, str]], markdown: bool = False,
                     rows: bool = False) -> DocumentContext:
    """`pages`: (page number, text) in order. `markdown`: '#' lines are headings. `rows`: every
    line is a table row (a spreadsheet): rows alike page after page are not running headers."""
    texts = [t for _, t in pages]
    running = frozenset() if rows else running_lines(texts)
    ctx = DocumentContext(document_label(path, title, texts, running), running,
                          document_label(path, title, texts, running, with_title=False))
    path_now: list[tuple[int, str]] = []
    for number, text in pages:
        ctx.page_path[number] = list(path_now)
        lines = text.splitlines(keepends=True)
        contents = sum(is_contents_line(ln) for ln in lines if ln.strip())
        if contents >= 5 and contents >= 0.4 * sum(1 for ln in lines if ln.strip()):
            continue  # a contents page: its entries are not the sections of what follows
        found: list[tuple[int, int, str]] = []
        pos = 0
        for ln in lines:
            s = ln.strip()
            if s and norm_line(s) not in running:
                level = heading_level(s, markdown)
                if level is not None:
                    text_h = _clean(s)[:60]
                    found.append((pos, level, text_h))
                    path_now = [p for p in path_now if p[0] < level] + [(level, text_h)]
            pos += len(ln)
        ctx.headings[number] = found
    return ctx


def retrieval_lines(text: str, running: frozenset[str]) -> tuple[list[tuple[int, int]], float]:
    """The lines of a chunk's text that are embedded and indexed, as spans of `text` (line ends
    left out), and the share of its non-blank lines that are boilerplate. Running headers and
    footers and leader lines are always left out; contents and index entries only where they are
    at least a third of the lines (a prose line may end in "see Note 5" too)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for piece in text.splitlines(keepends=True):
        line = piece.splitlines()[0]
        if line.strip():
            spans.append((pos, pos + len(line)))
        pos += len(piece)
    if not spans:
        return [], 0.0
    lines = [text[a:b] for a, b in spans]
    run = [norm_line(ln) in running for ln in lines]
    contents = [is_contents_line(ln) for ln in lines]
    share = sum(a or b for a, b in zip(run, contents)) / len(lines)
    many = sum(contents) >= len(lines) / 3
    kept = [span for span, ln, r, c in zip(spans, lines, run, contents)
            if not (r or (c and (many or _LEADER.search(ln))))]
    return kept, share
