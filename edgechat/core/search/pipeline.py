"""From a request to numbered sources: understanding (search gate and follow-up rewrite, the
`TurnInterpreter`) -> hybrid retrieval -> optional rerank (the `Reranker` hook; the app sets
none, benchmarks/rerankers.py holds the ones measured) -> selection (MMR by default,
edgechat.core.search.mmr).

The pipeline never talks to a language model for the answer itself; edgechat.core.answering.answer does,
with the ProcessedQuery this module produces.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from edgechat.core.records import Candidate, ChatMessage, ProcessedQuery, RagRequest, Source
from edgechat.core.search.mmr import MmrSettings, mmr_select
from edgechat.core.search.retrieval import Retriever


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
        """Return the candidates reordered, each with rerank_score set and score updated."""
        ...


@dataclass
class QueryUnderstanding:
    """What the turn means for search (filled by the gate and rewriter of edgechat.core.understanding)."""

    search: bool = True
    query: str | None = None  # standalone query for the vector leg
    keywords: list[str] | None = None  # terms for the lexical leg
    raw: str | None = None  # the rewriter's raw output
    reason: str = ""
    details: dict = field(default_factory=dict)  # how the turn was read (shown in "How this was found")


class TurnInterpreter(Protocol):
    def interpret(self, query: str, recent: Sequence[ChatMessage]) -> QueryUnderstanding: ...


@dataclass
class PipelineSettings:
    candidates: int = 50  # fused candidates kept for reranking and the diagnostics
    # MMR in the selection of the final sources; None: plain top k. On by default: on SciFact dev
    # it took distinct documents in the top five from 3.6 to 4.6 at no measurable nDCG@10 cost,
    # and on the manuals' follow-up set distinct pages in the top five from 4.3 to 4.9 at equal
    # Recall@5 (benchmarks/rerank_quality.py, benchmarks/followups.py).
    diversity: MmrSettings | None = field(default_factory=MmrSettings)


class RagPipeline:
    def __init__(
        self,
        retriever: Retriever,
        *,
        reranker: Reranker | None = None,
        interpreter: TurnInterpreter | None = None,
        settings: PipelineSettings | None = None,
    ) -> None:
        self.retriever = retriever
        self.reranker = reranker
        self.interpreter = interpreter
        self.settings = settings or PipelineSettings()

    def process(self, request: RagRequest) -> ProcessedQuery:
        t_start = time.perf_counter()
        timings: dict[str, float] = {}
        pq = ProcessedQuery(original_query=request.query)

        understanding = QueryUnderstanding()
        if self.interpreter is not None:
            t = time.perf_counter()
            understanding = self.interpreter.interpret(request.query, request.recent_messages)
            timings["understand"] = time.perf_counter() - t
        pq.rewritten_query = understanding.query
        pq.keywords = list(understanding.keywords or [])
        pq.rewrite_raw = understanding.raw
        if not understanding.search:
            pq.search_skipped = True
            pq.diagnostics = {"timings": timings, "skip_reason": understanding.reason, "counts": {},
                              "understand": understanding.details}
            timings["total"] = time.perf_counter() - t_start
            return pq

        query = understanding.query or request.query
        result = self.retriever.search(query, keywords=understanding.keywords or None, scope=request.scope)
        timings.update({f"retrieve.{k}": v for k, v in result.timings.items()})
        raw = result.candidates[: self.settings.candidates]
        pq.raw_candidates = raw
        pq.subject_files, pq.subject_words = list(result.subject.file_ids), list(result.subject.words)
        pq.subject_identity_words = list(result.subject.identity_words)

        ranked = raw
        if self.reranker is not None and raw:
            t = time.perf_counter()
            pq.reranked_candidates = self.reranker.rerank(query, [_copy(c) for c in raw])
            ranked = pq.reranked_candidates
            timings["rerank"] = time.perf_counter() - t

        pool = [c for c in ranked if c.score >= request.min_score]
        chosen = pool[: max(0, request.max_results)]
        passed_over: list[str] = []
        if self.settings.diversity is not None:
            diverse = mmr_select(pool, max(0, request.max_results), self.settings.diversity)
            kept = {id(c) for c in diverse}
            passed_over = [c.chunk_id for c in chosen if id(c) not in kept]
            chosen = diverse
        pq.references = [to_source(i, c, self.retriever.table_header(c)) for i, c in enumerate(chosen, 1)]
        timings["total"] = time.perf_counter() - t_start
        pq.diagnostics = {
            "timings": timings,
            "counts": {**result.counts, "sources": len(pq.references)},
            "scope": None if request.scope is None else request.scope.to_dict(),
            "understand": understanding.details,
            "diversity": None if self.settings.diversity is None else {
                "mmr_lambda": self.settings.diversity.lam, "passed_over": passed_over},
        }
        return pq


def _copy(c: Candidate) -> Candidate:
    from dataclasses import replace

    return replace(c, metadata=dict(c.metadata))


def to_source(ordinal: int, c: Candidate, table_header: str = "") -> Source:
    meta = {k: str(v) for k, v in c.metadata.items() if v not in (None, "")}
    return Source(
        ordinal=ordinal,
        content=c.text,
        title=c.title or c.path,
        path=c.path,
        score=round(float(c.score), 4),
        page=c.page,
        start=c.start,
        end=c.end,
        file_id=c.file_id,
        chunk_id=c.chunk_id,
        metadata=meta,
        table_header=table_header,
    )


def how_found(pq: ProcessedQuery, limit: int = 10) -> dict[str, Any]:
    """What the "How this was found" view shows, as plain data small enough to save with a
    chat: the query as searched, the keywords, whether search was skipped and why, the top
    candidates before and after reranking with their scores, the final sources and the time
    each stage took. It holds titles, pages and scores only, never the passages' text."""

    def cand(c: Candidate) -> dict[str, Any]:
        return {
            "chunk_id": c.chunk_id,
            "title": c.title,
            "path": c.path,
            "page": c.page,
            "score": round(float(c.score), 4),
            "vector_rank": c.vector_rank,
            "vector_score": None if c.vector_score is None else round(float(c.vector_score), 4),
            "lexical_rank": c.lexical_rank,
            "lexical_score": None if c.lexical_score is None else round(float(c.lexical_score), 4),
            "rerank_score": None if c.rerank_score is None else round(float(c.rerank_score), 4),
        }

    d = pq.diagnostics or {}
    return {
        "original_query": pq.original_query,
        "searched_query": pq.rewritten_query or pq.original_query,
        "rewritten": bool(pq.rewritten_query) and pq.rewritten_query != pq.original_query,
        "keywords": list(pq.keywords),
        "search_skipped": pq.search_skipped,
        "skip_reason": d.get("skip_reason", ""),
        "candidates": [cand(c) for c in pq.raw_candidates[:limit]],
        "reranked": [cand(c) for c in pq.reranked_candidates[:limit]],
        "sources": [{"number": s.ordinal, "title": s.title, "page": s.page, "score": s.score,
                     "chunk_id": s.chunk_id} for s in pq.references],
        "passed_over_for_diversity": list((d.get("diversity") or {}).get("passed_over") or []),
        "timings_ms": {k: round(1000 * v, 1) for k, v in (d.get("timings") or {}).items()},
        "counts": dict(d.get("counts") or {}),
    }
