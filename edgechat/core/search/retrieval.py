"""Hybrid retrieval: a vector leg (Chroma, cosine) and a lexical leg (SQLite FTS5, BM25 with
Porter stemming), fused, deduplicated and scoped.

Fusion. Over the union of both legs' top `depth` hits, each leg's scores are standardised
(z-scores: how far above the query's typical candidate a chunk is; a chunk BM25 did not return
scores 0 there) and mixed `vector_weight` vector / the rest lexical. On SciFact this ranks better
than reciprocal rank fusion of the same two lists and than either leg alone, and nearby mixes and
depths score about the same, so the choice is not a knife edge (benchmarks/retrieval_quality.py
measures it; the figures are in docs/). Standardising each leg over its own hits only would give
a lone keyword match no credit in a small library, where a leg returns only a few hits.
The fused value is squashed to 0..1 with a logistic, so 0.5 means "average on both legs" and a
minimum score means the same thing for every query.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from edgechat.core.embedding.embedder import Embedder
from edgechat.core.records import Candidate, Scope
from edgechat.core.search.subject import Subject, named_documents
from edgechat.core.search.words import STOPWORDS, keywords_of, stem
from edgechat.core.store import Store
from edgechat.core.store.library import LEXICAL_BUDGET

__all__ = ["STOPWORDS", "RetrievalResult", "RetrievalSettings", "Retriever", "fts_query", "keywords_of", "stem",
           "zscore_fusion"]

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
    fusion: str = "zscore"  # "zscore" (default) or "rrf" (reciprocal rank fusion, for comparison)
    vector_weight: float = 0.3  # zscore: the lexical leg gets 1 - vector_weight
    rrf_k: int = 60
    # BM25 weight of each lexical column (store.library.FTS_COLUMNS): the chunk's text, the
    # document's title, its file name, the chunk's context header (document, section, table).
    # Name and context at 2 balance the filings' precision and figure recall against SciFact's
    # ranking; higher and lower weights each lost on one of them (benchmarks/retrieval_quality.py
    # and benchmarks/sec10q_retrieval.py).
    fts_weights: tuple[float, float, float, float] = (1.0, 0.5, 2.0, 2.0)
    # Store.lexical_search_words: when a query's words are in more passages than this, only the
    # passages holding its rarer words are BM25-scored (exactly, with every word). 0: always all.
    lexical_budget: int = LEXICAL_BUDGET
    # Taken off the fused score (z units) of the passages of documents the query does not name when
    # it names some (edgechat.core.search.subject). 0 turns it off.
    document_match: float = 3.0


@dataclass
class RetrievalResult:
    candidates: list[Candidate]  # fused, deduplicated, best first (not yet cut to top-k)
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    subject: Subject = field(default_factory=Subject)  # the documents the query names, preferred


def _standardise(values: Sequence[float]) -> list[float]:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    return [(v - mean) / sd for v in values] if sd > 1e-9 else [0.0] * n


def zscore_fusion(
    vec_hits: Sequence[tuple[str, float]], lex_hits: Sequence[tuple[str, float]], vector_weight: float
) -> dict[str, float]:
    """Mix the legs' standardised scores over the union of their hits.

    A chunk BM25 did not return scores 0 on that leg (it shares no term with the query); one
    the vector leg did not return takes the lowest similarity the leg returned. Standardising
    over the union (not each leg's own hits) keeps a lone keyword match worth something: with
    a handful of hits, a leg's own spread is meaningless."""
    ids = list(dict.fromkeys([c for c, _ in vec_hits] + [c for c, _ in lex_hits]))
    if not ids:
        return {}
    dv, dl = dict(vec_hits), dict(lex_hits)
    floor_v = min(dv.values()) if dv else 0.0
    zv = _standardise([dv.get(c, floor_v) for c in ids])
    zl = _standardise([dl.get(c, 0.0) for c in ids])
    w = vector_weight if dv and dl else (1.0 if dv else 0.0)
    return {c: w * a + (1 - w) * b for c, a, b in zip(ids, zv, zl)}


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class Retriever:
    def __init__(self, store: Store, embedder: Embedder, settings: RetrievalSettings = RetrievalSettings()) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def table_header(self, c: Candidate) -> str:
        """The headings of the table candidate `c` begins inside of (Store.table_header)."""
        return self.store.table_header(c)

    def scope_file_ids(self, scope: Scope | None) -> list[str] | None:
        if scope is None:
            return None
        return list(dict.fromkeys(i for root in scope.roots() for i in self.store.file_ids_under(root)))

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
            qv = self.embedder.embed_query(query)
            timings["embed_query"] = time.perf_counter() - t
            t = time.perf_counter()
            vec_hits = self.store.vector_search(qv, s.depth, file_ids)
            timings["vector"] = time.perf_counter() - t
        if mode in ("hybrid", "lexical"):
            t = time.perf_counter()
            words = list(keywords) if keywords else keywords_of(query)
            lex_hits = self.store.lexical_search_words(words, s.depth, file_ids, s.fts_weights, s.lexical_budget)
            timings["lexical"] = time.perf_counter() - t

        t = time.perf_counter()
        vrank = {cid: (r, sc) for r, (cid, sc) in enumerate(vec_hits, 1)}
        lrank = {cid: (r, sc) for r, (cid, sc) in enumerate(lex_hits, 1)}
        if s.fusion == "rrf":
            fused = {c: 0.0 for c in [*vrank, *lrank]}
            for c, (r, _) in vrank.items():
                fused[c] += 1.0 / (s.rrf_k + r)
            for c, (r, _) in lrank.items():
                fused[c] += 1.0 / (s.rrf_k + r)
            top = 2.0 / (s.rrf_k + 1)
            squash = lambda x: x / top  # 1.0 for a chunk first on both legs
        else:
            fused = zscore_fusion(vec_hits, lex_hits, s.vector_weight)
            squash = _logistic
        timings["fuse"] = time.perf_counter() - t
        t = time.perf_counter()
        rows = self.store.chunk_rows(fused)
        timings["rows"] = time.perf_counter() - t
        t = time.perf_counter()
        subject = Subject()
        if s.document_match and rows and s.fusion != "rrf":  # in z units: the z-score fusion only
            # The documents the query names (edgechat.core.search.subject): the others' passages
            # are ranked below theirs, keeping their own order.
            subject = named_documents(" ".join([query, *(keywords or [])]),
                                      sorted(rows.values(), key=lambda r: -fused[r.chunk_id]),
                                      self.store.describe_files(list(dict.fromkeys(r.file_id for r in rows.values()))))
            if subject:
                named = set(subject.file_ids)
                for cid, row in rows.items():
                    if row.file_id not in named:
                        fused[cid] -= s.document_match
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
            cand.score = squash(fused[cid])
            if cid in vrank:
                cand.vector_rank, cand.vector_score = vrank[cid]
            if cid in lrank:
                cand.lexical_rank, cand.lexical_score = lrank[cid]
            candidates.append(cand)
        timings["fuse"] += time.perf_counter() - t
        return RetrievalResult(
            candidates,
            timings=timings,
            counts={"vector_hits": len(vec_hits), "lexical_hits": len(lex_hits), "candidates": len(candidates)},
            subject=subject,
        )
