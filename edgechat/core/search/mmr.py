"""Diversity in the final selection: maximal marginal relevance (MMR).

`mmr_select(candidates, k)` picks the final sources so that two windows of one passage (same
page, overlapping or adjacent spans) or two near-identical texts (word-set Jaccard) do not both
take a slot when other relevant material is close behind. The pipeline applies it with
`PipelineSettings.diversity` (on by default); see `MmrSettings` and the numbers in
benchmarks/rerank_quality.py and benchmarks/followups.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from edgechat.core.records import Candidate

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class MmrSettings:
    # Relevance weight; 1.0 turns diversity off. 0.5 rather than 0.7: measured, the filings'
    # figure recall and the manuals' answers gain clearly and SciFact's ranking loses next to nothing.
    lam: float = 0.5
    pool: int = 20  # only this many of the best candidates compete for the slots
    same_passage: float = 0.9  # similarity of two windows of one passage (same page, spans touch)
    same_page: float = 0.4  # similarity of two far-apart windows of one page
    gap_chars: int = 200  # spans closer than this are one passage


def _word_set(c: Candidate, cache: dict[str, frozenset[str]]) -> frozenset[str]:
    key = c.chunk_id or c.text
    s = cache.get(key)
    if s is None:  # plain lowercase words: near-duplicates share them without any stemming
        s = frozenset(_WORD.findall(c.text.lower()))
        cache[key] = s
    return s


def similarity(a: Candidate, b: Candidate, settings: MmrSettings = MmrSettings(),
               cache: dict[str, frozenset[str]] | None = None) -> float:  # fmt: skip
    """How much `b` repeats `a`: one passage, one page, or near-identical text (0..1)."""
    structural = 0.0
    if a.file_id and a.file_id == b.file_id and a.page == b.page:
        gap = max(a.start, b.start) - min(a.end, b.end)
        structural = settings.same_passage if gap < settings.gap_chars else settings.same_page
        if structural >= 0.9:
            return structural
    cache = {} if cache is None else cache
    wa, wb = _word_set(a, cache), _word_set(b, cache)
    jac = len(wa & wb) / len(wa | wb) if (wa or wb) else 1.0
    return max(jac, structural)


def mmr_select(candidates: Sequence[Candidate], k: int, settings: MmrSettings | None = None) -> list[Candidate]:
    """The `k` candidates to use, best first, by maximal marginal relevance over the first
    `settings.pool`: relevance is the score as a share of the best one, redundancy the
    largest `similarity` to a candidate already chosen."""
    s = settings or MmrSettings()
    cands = list(candidates)
    if k <= 0 or not cands:
        return []
    if s.lam >= 1.0 or len(cands) <= 1:
        return cands[:k]
    pool = cands[: max(k, s.pool)]
    top = max(c.score for c in pool)
    rel = [c.score / top if top > 0 else 0.0 for c in pool]
    cache: dict[str, frozenset[str]] = {}
    chosen: list[int] = []
    max_sim = [0.0] * len(pool)
    remaining = list(range(len(pool)))
    while remaining and len(chosen) < k:
        best = max(remaining, key=lambda i: (s.lam * rel[i] - (1 - s.lam) * max_sim[i], -i))
        chosen.append(best)
        remaining.remove(best)
        for i in remaining:
            max_sim[i] = max(max_sim[i], similarity(pool[best], pool[i], s, cache))
    out = [pool[i] for i in chosen]
    if len(out) < k:
        out += cands[len(pool) : len(pool) + k - len(out)]
    return out
