from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgechat.core.indexing.chunking import ChunkSettings, chunk_page, chunk_pages
from edgechat.core.records import Page


@pytest.fixture(scope="module")
def tokenizer(embedder):
    return embedder.tokenizer


def _check(page: Page, chunks, tokenizer, size: int) -> None:
    for c in chunks:
        assert c.page == page.number
        assert page.text[c.start : c.end] == c.text
        assert 0 < c.tokens <= size
        assert len(tokenizer.encode(c.text, add_special_tokens=False).ids) <= size + 2
        if c.body_ids is not None:  # the page's ids, given only where the window's own text has them
            assert list(c.body_ids) == tokenizer.encode(c.text, add_special_tokens=False).ids


def test_long_page_is_windowed_with_overlap(tokenizer):
    sentences = [f"Sentence number {i} talks about topic {i % 7} in some detail." for i in range(200)]
    page = Page(3, " ".join(sentences))
    s = ChunkSettings(size=64, overlap=16)
    chunks = list(chunk_page(page, tokenizer, s))
    assert len(chunks) > 10
    _check(page, chunks, tokenizer, 64)
    # Consecutive windows overlap, and together they cover the whole page.
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end
    offsets = [o for o in tokenizer.encode(page.text, add_special_tokens=False).offsets if o[1] > o[0]]
    assert chunks[0].start == offsets[0][0] and chunks[-1].end == offsets[-1][1]
    # Windows prefer to end at a sentence boundary.
    assert sum(c.text.endswith(".") for c in chunks[:-1]) >= len(chunks[:-1]) * 0.8


def test_chunks_never_cross_pages(tokenizer):
    pages = [Page(1, "Alpha beta gamma delta. " * 30), Page(2, ""), Page(3, "   \n "), Page(4, "Omega psi chi. " * 40)]
    chunks = chunk_pages(pages, tokenizer, ChunkSettings(size=32, overlap=8))
    assert {c.page for c in chunks} == {1, 4}
    for c in chunks:
        assert pages[c.page - 1].text[c.start : c.end] == c.text


def test_tiny_noise_is_dropped_but_a_short_page_is_kept(tokenizer):
    assert list(chunk_page(Page(1, "  12 \n"), tokenizer)) == []  # a lone page number
    only = list(chunk_page(Page(1, "A short but real page of text."), tokenizer))
    assert len(only) == 1 and only[0].text == "A short but real page of text."


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        ChunkSettings(size=4)
    with pytest.raises(ValueError):
        ChunkSettings(size=100, overlap=90)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3000),
       st.integers(min_value=8, max_value=120))
def test_span_invariant_holds_for_any_text(tokenizer, text, size):
    page = Page(1, text)
    chunks = list(chunk_page(page, tokenizer, ChunkSettings(size=size, overlap=size // 4)))
    _check(page, chunks, tokenizer, size)


def test_pages_tokenized_in_groups_give_the_chunks_of_one_page_at_a_time(tokenizer):
    """chunk_pages and chunk_document tokenize ENCODE_PAGES pages per call (on every core, the GIL
    released); the windows must be the ones each page tokenized alone gives, across groups, with
    empty pages and pages of odd characters among them."""
    from edgechat.core.indexing.chunking import ENCODE_PAGES

    texts = ["", "Å accented café naïve – dashes — and 数字 in text. " * 30, "  \n  "]
    texts += [f"Page {n}: the tide table shows {n * 7} cm at noon. " * (5 + n % 17) for n in range(ENCODE_PAGES + 9)]
    pages = [Page(i + 1, t) for i, t in enumerate(texts)]
    s = ChunkSettings(size=48, overlap=8)
    alone = [c for p in pages for c in chunk_page(p, tokenizer, s)]
    assert len({c.page for c in alone}) == len(pages) - 2 and len(pages) > ENCODE_PAGES
    assert chunk_pages(pages, tokenizer, s) == alone


def test_parts_grow_from_a_few_pages_to_a_full_encode_batch():
    """A document's parts: FIRST_PART_PAGES pages, then each twice the one before up to
    ENCODE_PAGES, covering every page once; a document without pages still has one (empty) part."""
    from edgechat.core.indexing.chunking import ENCODE_PAGES, FIRST_PART_PAGES, part_bounds

    assert part_bounds(0) == [0, 0]
    for n in range(1, 3 * ENCODE_PAGES + 7):
        b = part_bounds(n)
        sizes = [hi - lo for lo, hi in zip(b, b[1:])]
        assert b[0] == 0 and b[-1] == n and all(s > 0 for s in sizes)
        assert sizes[0] == min(n, FIRST_PART_PAGES)
        for before, size in zip(sizes, sizes[1:-1]):  # (the last part is what is left)
            assert size == min(ENCODE_PAGES, 2 * before)
        assert max(sizes) <= ENCODE_PAGES


def test_a_chunk_carries_its_token_ids_only_when_they_are_its_text_s_own(tokenizer):
    # "electroencephalography" is several word pieces: a window may start or end inside it
    words = " ".join(f"electroencephalography record {i} shows rhythm {i % 5}" for i in range(120))
    page = Page(1, words)
    chunks = list(chunk_page(page, tokenizer, ChunkSettings(size=40, overlap=13)))
    with_ids = [c for c in chunks if c.body_ids is not None]
    without = [c for c in chunks if c.body_ids is None]
    assert with_ids and without  # some windows cut a word: those are tokenized again
    for c in with_ids:
        assert list(c.body_ids) == tokenizer.encode(c.text, add_special_tokens=False).ids
    for c in without:
        assert c.embed_ids is None


def test_a_document_s_chunks_give_the_ids_of_what_is_embedded(tokenizer):
    from edgechat.core.indexing.chunking import chunk_document
    from edgechat.core.records import Document

    words = "amber birch cedar dune ember fjord grove heath inlet jetty kelp lagoon marsh north ocean pier".split()

    def body(n: int) -> str:
        return "\n".join(f"The keeper trimmed the {words[(n * 3 + k) % 16]} wick and watched the "
                         f"{words[(n * 7 + k) % 16]} water rise." for k in range(4))

    pages = [Page(n, f"The Harbour Almanac {n}\n{body(n)}\nKeeping the light, chapter two") for n in range(1, 7)]
    chunks = chunk_document(Document(path="/docs/lamps.pdf", title="Lamps", format="pdf", pages=pages), tokenizer)
    known = [c for c in chunks if c.embed_ids is not None]
    assert known and all(c.context for c in known)  # headers included
    # the running header and footer left out of what is embedded: the ids are the kept lines'
    assert all(c.search_text and "Almanac" not in c.search_text for c in known)
    for c in chunks:
        if c.embed_ids is not None:
            assert list(c.embed_ids) == tokenizer.encode(c.embed_text, add_special_tokens=False).ids


# Two unrelated kinds of prose: a kitchen's instructions and a contract's clauses. Sentences of
# different lengths, some with "e.g." inside, so that the overlap starts inside a sentence.
_KITCHEN = [
    "Whisk the eggs with the sugar until the mixture is pale and falls from the whisk in ribbons.",
    "Do not open the oven during the first twenty minutes, e.g. to look at the crust, or the cake sinks.",
    "Butter the tin.",
    "Sift the flour twice, then fold it in with a metal spoon so that the air beaten into the eggs stays there.",
]
_CONTRACT = [
    "The tenant shall not sublet any part of the premises without the written consent of the landlord.",
    "Rent is due on the first day of each month, e.g. by standing order, and is late after the seventh day.",
    "Notices are given in writing.",
    "Either party may end this agreement by giving the other at least two months' notice, except during the first year.",
]


@pytest.mark.parametrize("sentences", [_KITCHEN, _CONTRACT], ids=["kitchen", "contract"])
def test_a_window_after_the_first_starts_at_a_sentence(tokenizer, sentences):
    # A passage that opens inside a sentence is quoted without its subject or its "not"; the
    # window starts at the start of a sentence near where its overlap begins.
    text = " ".join(sentences[i % 4] for i in range(60))
    page = Page(1, text)
    chunks = list(chunk_page(page, tokenizer, ChunkSettings(size=64, overlap=16)))
    assert len(chunks) > 10
    _check(page, chunks, tokenizer, 64)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end  # still overlapping
        assert text[b.start:].startswith(tuple(s[:12] for s in sentences)), text[b.start:b.start + 40]
