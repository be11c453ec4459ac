"""Split a page's text into overlapping windows measured in the embedder's own tokens.

Why 200 tokens with 40 of overlap: all-MiniLM-L6-v2 was tuned on inputs up to 256 word pieces
(longer text is truncated and silently lost), and retrieval of a specific fact works best when a
chunk holds one passage rather than a whole page. 200 leaves room for the [CLS]/[SEP] tokens and
for tokenizer drift, and keeps a typical PDF page to 2-4 chunks. An overlap of 40 tokens (about
two sentences of prose) means a sentence cut at a window's edge appears whole in the next one.
Windows end at a sentence boundary when one lies in the last quarter of the window.

Chunks never cross a page, and each keeps its character span in that page's text:
`page.text[chunk.start:chunk.end] == chunk.text` always holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tokenizers import Tokenizer

from edgechat.core.records import Chunk, Page

_SENTENCE_END = (".", "?", "!", ";", ":")


@dataclass(frozen=True)
class ChunkSettings:
    size: int = 200
    overlap: int = 40
    min_chars: int = 20  # windows with less real text than this are noise (page numbers etc.)

    def __post_init__(self) -> None:
        if self.size < 8:
            raise ValueError("chunk size must be at least 8 tokens")
        if not 0 <= self.overlap < self.size // 2 + 1:
            raise ValueError("overlap must be between 0 and half the chunk size")


def chunk_page(page: Page, tokenizer: Tokenizer, settings: ChunkSettings = ChunkSettings()) -> Iterator[Chunk]:
    text = page.text
    if not text or not text.strip():
        return
    enc = tokenizer.encode(text, add_special_tokens=False)
    offsets = [o for o in enc.offsets if o[1] > o[0]]
    n = len(offsets)
    if n == 0:
        return
    i = 0
    while i < n:
        j = min(i + settings.size, n)
        if j < n:
            j = _sentence_cut(text, offsets, i, j, settings.size)
        start, end = offsets[i][0], offsets[j - 1][1]
        piece = text[start:end]
        if len(piece.strip()) >= settings.min_chars:
            yield Chunk(page=page.number, start=start, end=end, text=piece, tokens=j - i)
        if j >= n:
            break
        i = max(j - settings.overlap, i + 1)


def _sentence_cut(text: str, offsets: Sequence[tuple[int, int]], i: int, j: int, size: int) -> int:
    """Move the window's end back to just after a sentence end in its last quarter, if any."""
    floor = i + (3 * size) // 4
    for k in range(j - 1, floor - 1, -1):
        tok_end = offsets[k][1]
        if text[tok_end - 1] in _SENTENCE_END:
            nxt = offsets[k + 1][0] if k + 1 < len(offsets) else len(text)
            if nxt > tok_end:  # followed by whitespace: a real boundary, not "e.g" or "3.14"
                return k + 1
        if "\n\n" in text[offsets[k][1] : offsets[k + 1][0]] if k + 1 < len(offsets) else False:
            return k + 1
    return j


def chunk_pages(
    pages: Sequence[Page], tokenizer: Tokenizer, settings: ChunkSettings = ChunkSettings()
) -> list[Chunk]:
    out: list[Chunk] = []
    for page in pages:
        out.extend(chunk_page(page, tokenizer, settings))
    return out
