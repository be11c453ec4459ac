"""Split a page's text into overlapping windows measured in the embedder's own tokens.

Why 200 tokens with 40 of overlap: all-MiniLM-L6-v2 was tuned on inputs up to 256 word pieces
(longer text is truncated and silently lost), and retrieval of a specific fact works best when a
chunk holds one passage rather than a whole page. 200 leaves room for the [CLS]/[SEP] tokens and
for tokenizer drift, and keeps a typical PDF page to 2-4 chunks. An overlap of 40 tokens (about
two sentences of prose) means a sentence cut at a window's edge appears whole in the next one.
Windows end at a sentence boundary when one lies in the last quarter of the window, and the next
one starts at a sentence's start when one lies near where the overlap begins (up to twice the
overlap back, else up to the window's end): a passage that opens inside a sentence is quoted
without the sentence's subject or its "not".

Chunks never cross a page, and each keeps its character span in that page's text:
`page.text[chunk.start:chunk.end] == chunk.text` always holds.

Tables (runs of rows of figures, indexing/context.py): a window that starts inside a table
carries the table's caption and column headers in its context. With `whole_tables` a table that
fits in a window is not cut: the window ends just above it and the next one takes it whole. `chunk_document` gives each chunk its context header and its search text (both
for retrieval only) and leaves out windows that are contents or index pages.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from tokenizers import Encoding, Tokenizer

from edgechat.core.indexing import context as ctx
from edgechat.core.records import Chunk, Document, Page

# How passages are cut, numbered: a file indexed by an older cut is indexed again by the next run
# over its folder (indexer.py), so a library gains a better cut without Library › Rebuild index.
#   1  a window after the first opened wherever its overlap began, mostly inside a sentence
#   2  it opens at a sentence's start
CUT = 2

_SENTENCE_END = (".", "?", "!", ";", ":")
_CLOSERS = "\"')]\u201d\u2019"
# Formats whose every line is a table row (spreadsheets): rows that look alike page after page
# are data, not running headers, and a row ending in a small number is not a contents entry.
ROWS_ONLY = frozenset({"xlsx", "csv"})


@dataclass(frozen=True)
class ChunkSettings:
    size: int = 200
    overlap: int = 40
    min_chars: int = 20  # windows with less real text than this are noise (page numbers etc.)
    context: bool = True  # chunk_document: a context header per chunk (document, section, table)
    context_tokens: int = 52  # at most this many tokens of header (size + this + 2 stays within 256)
    tables: bool = True  # find tables: their header goes into the context of windows inside them
    # ... and a table that fits in a window is not cut. Off: on the filings it moved figure recall
    # only within noise, for more chunks.
    whole_tables: bool = False
    boilerplate: bool = True  # leave contents/index windows and running lines out of retrieval
    boilerplate_share: float = 0.5  # a window with at least this share of boilerplate lines is left out

    def __post_init__(self) -> None:
        if self.size < 8:
            raise ValueError("chunk size must be at least 8 tokens")
        if not 0 <= self.overlap < self.size // 2 + 1:
            raise ValueError("overlap must be between 0 and half the chunk size")


def chunk_page(
    page: Page,
    tokenizer: Tokenizer,
    settings: ChunkSettings = ChunkSettings(),
    tables: Sequence[ctx.Table] = (),
    rows: bool = False,
    encoding: Encoding | None = None,
) -> Iterator[Chunk]:
    """`rows`: every line is a table row (a spreadsheet): windows end and start at line ends, so
    a row is cut only when it is longer than a window. `encoding`: the page's text as the
    tokenizer encoded it (without special tokens), when the caller has it already."""
    text = page.text
    if not text or not text.strip():
        return
    enc = encoding or tokenizer.encode(text, add_special_tokens=False)
    offsets = [o for o in enc.offsets if o[1] > o[0]]
    n = len(offsets)
    if n == 0:
        return
    # A window's token ids are the page's, from word start to word end, when no token of the page
    # is empty (then the indices line up): tokenizing the window's text alone gives the same.
    ids, pieces = (enc.ids, enc.tokens) if n == len(enc.offsets) else (None, None)
    size = settings.size
    starts = [o[0] for o in offsets]
    # tables as token ranges [first, last) of those that fit in one window
    spans = [(bisect.bisect_left(starts, t.start), bisect.bisect_left(starts, t.end)) for t in tables]
    spans = [(a, b) for a, b in spans if 0 < b - a <= size]
    i = 0
    while i < n:
        j = min(i + size, n)
        whole_table = False
        if j < n:
            floor = 0
            for a, b in spans:
                if i + size // 4 < a < j < b:  # the window would cut a table that fits in one
                    j, whole_table = a, True
                    break
                if i <= a and b <= j:  # a table wholly inside: do not end the window within it
                    floor = max(floor, b)
            if rows:
                j = _line_cut(text, offsets, i + 1, j)
            elif not whole_table:
                j = _sentence_cut(text, offsets, i, j, size, floor)
        start, end = offsets[i][0], offsets[j - 1][1]
        piece = text[start:end]
        if len(piece.strip()) >= settings.min_chars:
            whole_words = pieces is not None and not pieces[i].startswith("##") and (
                j == n or not pieces[j].startswith("##"))
            yield Chunk(page=page.number, start=start, end=end, text=piece, tokens=j - i,
                        body_ids=tuple(ids[i:j]) if whole_words and ids is not None else None)
        if j >= n:
            break
        nxt = max(j - settings.overlap, i + 1)
        if rows:  # the overlap starts at a row's start
            k = _line_cut(text, offsets, nxt, j, forward=True)
            nxt = k if k < j else nxt
        else:  # ... or at a sentence's
            nxt = _sentence_start(text, offsets, nxt, max(i + 1, j - 2 * settings.overlap), j)
        if whole_table and any(a == j and b - nxt > size for a, b in spans):
            nxt = j  # with the overlap the table would not fit: start the next window at it
        i = nxt


def _line_cut(text: str, offsets: Sequence[tuple[int, int]], lo: int, j: int, forward: bool = False) -> int:
    """The last token index k in (lo, j] (the first, `forward`) that starts a line: a window
    ending before token k ends at a line end. `j` itself when there is none."""
    ks = range(lo, j) if forward else range(j, lo, -1)
    for k in ks:
        if 0 < k < len(offsets) and "\n" in text[offsets[k - 1][1]:offsets[k][0]]:
            return k
    return j


def _sentence_cut(text: str, offsets: Sequence[tuple[int, int]], i: int, j: int, size: int, floor: int = 0) -> int:
    """Move the window's end back to just after a sentence end in its last quarter (and not
    before `floor`), if any."""
    floor = max(floor, i + (3 * size) // 4)
    for k in range(j - 1, floor - 1, -1):
        tok_end = offsets[k][1]
        if text[tok_end - 1] in _SENTENCE_END:
            nxt = offsets[k + 1][0] if k + 1 < len(offsets) else len(text)
            if nxt > tok_end:  # followed by whitespace: a real boundary, not "e.g" or "3.14"
                return k + 1
        if "\n\n" in text[offsets[k][1] : offsets[k + 1][0]] if k + 1 < len(offsets) else False:
            return k + 1
    return j


def _starts_sentence(text: str, offsets: Sequence[tuple[int, int]], k: int) -> bool:
    """Does token k start a paragraph, or a sentence: whitespace before it, a sentence's end
    before that (a closing quote or bracket may follow it), and not a word in lower case ("e.g.
    the")?"""
    end = offsets[k - 1][1]
    gap = text[end:offsets[k][0]]
    if not gap or gap.strip():
        return False
    if "\n\n" in gap:
        return True
    last = text[max(0, end - 3):end].rstrip(_CLOSERS)[-1:]  # "" (closers only) is no sentence's end
    return last != "" and last in ".?!" and not text[offsets[k][0]].islower()


def _sentence_start(text: str, offsets: Sequence[tuple[int, int]], k: int, lo: int, hi: int) -> int:
    """Where the next window starts: the last sentence start in [lo, k], else the first in
    (k, hi), else k."""
    for m in [*range(k, lo - 1, -1), *range(k + 1, hi)]:
        if 0 < m < len(offsets) and _starts_sentence(text, offsets, m):
            return m
    return k


ENCODE_PAGES = 32  # pages tokenized per call (bounds the encodings held at once)


def _encoded(pages: Sequence[Page], tokenizer: Tokenizer) -> Iterator[tuple[Page, Encoding]]:
    """Each page with its encoding, ENCODE_PAGES pages per encode_batch call: the same encodings
    as one encode() per page, but made on every core, and without holding the GIL (encode()
    holds it, and the embedder's lanes need it between texts)."""
    for lo in range(0, len(pages), ENCODE_PAGES):
        group = pages[lo : lo + ENCODE_PAGES]
        yield from zip(group, tokenizer.encode_batch([p.text for p in group], add_special_tokens=False))


def chunk_pages(
    pages: Sequence[Page], tokenizer: Tokenizer, settings: ChunkSettings = ChunkSettings()
) -> list[Chunk]:
    out: list[Chunk] = []
    for page, enc in _encoded(pages, tokenizer):
        tables = ctx.find_tables(page.text) if settings.tables and settings.whole_tables else ()
        out.extend(chunk_page(page, tokenizer, settings, tables, encoding=enc))
    return out


def chunk_document(doc: Document, tokenizer: Tokenizer, settings: ChunkSettings = ChunkSettings()) -> list[Chunk]:
    """A document's chunks, each with its retrieval context (settings.context) and search text
    without boilerplate (settings.boilerplate). Windows that are mostly contents or index
    entries are left out, unless nothing else would be left."""
    return [c for part, _last in chunk_document_parts(doc, tokenizer, settings) for c in part]


FIRST_PART_PAGES = 4  # the pages of a document's first part: the embedder starts on them


def part_bounds(pages: int) -> list[int]:
    """The page bounds of a document's parts: FIRST_PART_PAGES pages, then each part twice the
    one before, up to ENCODE_PAGES, so the embedder has the last part's chunks to work on while
    the next is chunked (with a flat first part of 4 pages and a second of 32 the embedder waited
    after the first); always one part, empty for no pages."""
    bounds, size = [0], FIRST_PART_PAGES
    while bounds[-1] < pages or len(bounds) == 1:
        bounds.append(min(pages, bounds[-1] + size))
        size = min(ENCODE_PAGES, 2 * size)
    return bounds


def chunk_document_parts(
    doc: Document, tokenizer: Tokenizer, settings: ChunkSettings = ChunkSettings()
) -> Iterator[tuple[list[Chunk], bool]]:
    """chunk_document's chunks in parts, (chunks, last), as the pages are chunked: the first
    FIRST_PART_PAGES pages, then parts growing to ENCODE_PAGES (part_bounds), so an indexer can
    embed a long document's first pages while the rest is chunked. The parts joined are chunk_document's
    list. Parts with no chunks are skipped but the last, which may be empty; a document with
    no chunks gives one empty last part."""
    if not (settings.context or settings.boilerplate):
        yield chunk_pages(doc.pages, tokenizer, settings), True
        return
    rows = doc.format in ROWS_ONLY
    dctx = ctx.document_context(doc.path, doc.title, [(p.number, p.text) for p in doc.pages], doc.format == "markdown",
                                rows)
    boilerplate = settings.boilerplate and not rows
    running = dctx.running if boilerplate else frozenset()
    if settings.context:  # for the retriever's document match (search/retrieval.py); never shown
        if dctx.identity:
            doc.metadata[ctx.LABEL_KEY] = dctx.identity
    left_out: list[Chunk] = []
    fitted: dict[str, tuple[str, tuple[int, ...]]] = {}  # header -> it cut to its tokens, and their ids
    given = False
    bounds = part_bounds(len(doc.pages))
    for lo, hi in zip(bounds, bounds[1:]):
        last = hi == len(doc.pages)
        out: list[Chunk] = []
        for page, enc in _encoded(doc.pages[lo:hi], tokenizer):
            tables = ctx.find_tables(page.text) if settings.tables else []
            page_tokens = _PageTokens(enc)
            for c in chunk_page(page, tokenizer, settings, tables if settings.whole_tables else (), rows=rows,
                                encoding=enc):
                kept, share = ctx.retrieval_lines(c.text, running) if boilerplate else ([], 0.0)
                search = "\n".join(c.text[a:b] for a, b in kept)
                body_ids = c.body_ids
                if search and search != c.text:  # the ids of the lines kept, from the page's
                    body_ids = page_tokens.ids_of([(c.start + a, c.start + b) for a, b in kept])
                header = ""
                header_ids: tuple[int, ...] = ()
                if settings.context:
                    parts = dctx.label.split(" | ") + [dctx.section_at(page.number, c.start)]
                    parts += [t.header for t in tables if t.start < c.start < t.end and t.header]
                    head = " ".join(c.text[:400].lower().split())
                    parts = [p for p in parts if p and " ".join(p.lower().split()) not in head]  # said already
                    joined = " | ".join(parts)
                    if joined not in fitted:
                        cut = _fit(joined, tokenizer, settings.context_tokens)
                        fitted[joined] = cut, tuple(tokenizer.encode(cut, add_special_tokens=False).ids)
                    header, header_ids = fitted[joined]
                c = replace(c, context=header, context_ids=header_ids or None,
                            search_text="" if search == c.text else search, body_ids=body_ids)
                if boilerplate and (share >= settings.boilerplate_share or not search.strip()):
                    left_out.append(c)
                else:
                    out.append(c)
        if last and not given and not out:
            yield left_out, True  # nothing but contents and index pages: those, rather than nothing
        elif out or last:
            given = True
            yield out, last


class _PageTokens:
    """A page's encoding, read once: the token ids of the lines a chunk keeps for its search text."""

    def __init__(self, enc: Encoding) -> None:
        self._enc = enc
        self._read = False

    def _load(self) -> None:
        offsets = self._enc.offsets
        self.exact = all(b > a for a, b in offsets)  # no empty token: indices line up with the text
        self.starts = [a for a, _ in offsets]
        self.ends = [b for _, b in offsets]
        self.ids, self.pieces = self._enc.ids, self._enc.tokens
        self._read = True

    def ids_of(self, spans: Sequence[tuple[int, int]]) -> tuple[int, ...] | None:
        """The ids of the text of `spans` (page offsets) joined by line ends, when they are the
        page's tokens inside them: none cut by a span's end, none a word's continuation at a
        span's start or just after its end; None otherwise (then the text is tokenized)."""
        if not self._read:
            self._load()
        if not self.exact:
            return None
        out: list[int] = []
        for a, b in spans:
            lo, hi = bisect.bisect_left(self.starts, a), bisect.bisect_left(self.starts, b)
            if lo < hi and (self.ends[hi - 1] > b or self.pieces[lo].startswith("##")):
                return None
            if lo > 0 and self.ends[lo - 1] > a:  # a token across the span's start
                return None
            if hi < len(self.pieces) and self.pieces[hi].startswith("##"):
                return None
            out.extend(self.ids[lo:hi])
        return tuple(out)


def _fit(text: str, tokenizer: Tokenizer, max_tokens: int) -> str:
    """`text` cut to its first `max_tokens` tokens."""
    if not text:
        return ""
    enc = tokenizer.encode(text, add_special_tokens=False)
    offs = [o for o in enc.offsets if o[1] > o[0]]
    return text if len(offs) <= max_tokens else text[: offs[max_tokens - 1][1]]
