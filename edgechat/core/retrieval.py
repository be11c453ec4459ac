"""Hybrid retrieval: a vector leg (Chroma, cosine) and a lexical leg (SQLite FTS5, BM25 with
Porter stemming), fused by rank, deduplicated, scoped and cut to top-k."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from edgechat.core.embedder import Embedder
from edgechat.core.records import Candidate, Scope
from edgechat.core.store import Store

# Words too common to help BM25 find anything; they only slow FTS5 down and add noise.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have
    how i if in into is it its me my of on or our should so than that the their them then there
    these they this those to too was we were what when where which while who whom why will with
    would you your about above after again against all am any because before below between both
    during each few further here just more most no nor not now only other own same some such very
    s t don shall may might must also""".split()
)

_WORD = re.compile(r"\w+", re.UNICODE)


def keywords_of(text: str) -> list[str]:
    """The distinct content words of `text`, in order: the lexical leg's query terms."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit()):
            seen.setdefault(w, None)
    return list(seen)


def fts_query(words: Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the words, each quoted (so no word is read as syntax)."""
    terms = []
    for w in words:
        w = w.replace('"', "")
        if w.strip():
            terms.append(f'"{w}"')
    return " OR ".join(terms)


@dataclass
class RetrievalSettings:
    depth: int = 100  # candidates taken from each leg before fusion
    rrf_k: int = 60
    vector_weight: float = 1.0
    lexical_weight: float = 1.0


@dataclass
class RetrievalResult:
    candidates: list[Candidate]  # fused, deduplicated, best first (not yet cut to top-k)
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class Retriever:
    def __init__(self, store: Store, embedder: Embedder, settings: RetrievalSettings = RetrievalSettings()) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def scope_file_ids(self, scope: Scope | None) -> list[str] | None:
        if scope is None:
            return None
        return self.store.file_ids_under(scope.path)

    def search(
        self,
        query: str,
        *,
        keywords: Sequence[str] | None = None,
        scope: Scope | None = None,
        mode: str = "hybrid",  # hybrid | vector | lexical
    ) -> RetrievalResult:
        s = self.settings
        timings: dict[str, float] = {}
        t = time.perf_counter()
        file_ids = self.scope_file_ids(scope)
        timings["scope"] = time.perf_counter() - t

        vec_hits: list[tuple[str, float]] = []
        lex_hits: list[tuple[str, float]] = []
        if mode in ("hybrid", "vector"):
            t = time.perf_counter()
            qv = self.embedder.embed([query])[0]
            timings["embed_query"] = time.perf_counter() - t
            t = time.perf_counter()
            vec_hits = self.store.vector_search(qv, s.depth, file_ids)
            timings["vector"] = time.perf_counter() - t
        if mode in ("hybrid", "lexical"):
            t = time.perf_counter()
            words = list(keywords) if keywords else keywords_of(query)
            lex_hits = self.store.lexical_search(fts_query(words), s.depth, file_ids)
            timings["lexical"] = time.perf_counter() - t

        t = time.perf_counter()
        fused: dict[str, float] = {}
        vrank: dict[str, tuple[int, float]] = {}
        lrank: dict[str, tuple[int, float]] = {}
        for r, (cid, sc) in enumerate(vec_hits, 1):
            vrank[cid] = (r, sc)
            fused[cid] = fused.get(cid, 0.0) + s.vector_weight / (s.rrf_k + r)
        for r, (cid, sc) in enumerate(lex_hits, 1):
            lrank[cid] = (r, sc)
            fused[cid] = fused.get(cid, 0.0) + s.lexical_weight / (s.rrf_k + r)
        # Scale so a chunk ranked first by every leg scores 1.0.
        top = (s.vector_weight * bool(vec_hits) + s.lexical_weight * bool(lex_hits)) / (s.rrf_k + 1) or 1.0
        rows = self.store.chunk_rows(fused)
        candidates: list[Candidate] = []
        seen_text: set[str] = set()
        for cid in sorted(fused, key=lambda c: -fused[c]):
            cand = rows.get(cid)
            if cand is None:  # a vector whose file is not (or no longer) fully indexed
                continue
            th = cand.metadata.pop("text_hash", "")
            if th in seen_text:  # the same passage in a copy of the file
                continue
            seen_text.add(th)
            cand.score = fused[cid] / top
            if cid in vrank:
                cand.vector_rank, cand.vector_score = vrank[cid]
            if cid in lrank:
                cand.lexical_rank, cand.lexical_score = lrank[cid]
            candidates.append(cand)
        timings["fuse"] = time.perf_counter() - t
        return RetrievalResult(
            candidates,
            timings,
            {"vector_hits": len(vec_hits), "lexical_hits": len(lex_hits), "candidates": len(candidates)},
        )
