"""Question -> processed query (edgechat.core.search.pipeline) -> is anything relevant? (if not:
"not in your documents" and the closest quotes, no model call) -> prompt under a token budget ->
streamed answer -> every sentence checked against the sources (verify.py), markers supplied to
supported sentences -> withheld when mostly unsupported -> citations (citations.py).

Relevance. The best candidate's vector cosine is the signal that carries over between
libraries (the fused hybrid score is relative to the query's own candidates: it was 0.70-0.87 for
every question, relevant or not). Over resources/sample and tests/helpers' corpus, 13 relevant
questions scored 0.38-0.76 (one exception, "What is the Great Red Spot?", 0.14: MiniLM misses
it, but every one of its words is in the Jupiter passage) and 12 questions about things absent
from the library 0.02-0.13 (one, "What is the price of EdgeChat Pro?", 0.38: it names the app).
So nothing is relevant when the cosine is under `MIN_RELEVANT_COSINE` (0.25, between the groups)
AND no candidate holds `MIN_KEYWORD_COVERAGE` (2/3) of the question's content words.

Withholding. A written answer is withheld when fewer than half of its claim sentences are
supported (`support_ratio` < 0.5) or when its first claim sentence is unsupported: the first
sentence is what a reader takes as the answer (the Echoserver opening line was the answer's
headline), so a wrong one is not rescued by true sentences after it. An answer that passes can
still hold an unsupported sentence later on: its verdict says so, and it is not `grounded`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

import types

from edgechat.core.answering.citations import build_citations
from edgechat.core.answering.extractive import ExtractiveClient
from edgechat.core.answering.verify import attribute, register_own_text, verify
from edgechat.core.llm.client import ChatClient
from edgechat.core.search.retrieval import keywords_of, stem
from edgechat.core.search.pipeline import RagPipeline
from edgechat.core.answering.prompt import fit_messages
from edgechat.core.records import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatUpdate,
    ClientKind,
    ProcessedQuery,
    RagRequest,
    SentenceVerdict,
    Source,
    StopReason,
    Support,
    support_ratio,
)

NOTHING_FOUND = "Nothing in your library matched this question, so there is nothing to cite."
NO_SEARCH_EXTRACTIVE = (
    "That doesn't look like a question about your documents, so nothing was searched. "
    "Without a language model EdgeChat can only answer from your documents: ask about them."
)
NOT_IN_DOCUMENTS = "Your documents don't say: nothing in them is close enough to this question."
WITHHELD = ("Not found in your documents: the answer the model wrote is not supported by them, "
            "so it is not shown as the answer.")
CLOSEST = "The closest passages:"
register_own_text(NOTHING_FOUND, NOT_IN_DOCUMENTS, WITHHELD, CLOSEST)

MIN_RELEVANT_COSINE = 0.25
MIN_KEYWORD_COVERAGE = 2 / 3
MIN_SUPPORT_RATIO = 0.5
MAX_QUOTES_SOURCES = 3


def relevance(pq: ProcessedQuery, sources: Sequence[Source]) -> dict[str, Any]:
    """Is anything retrieved relevant to the question? See the module docstring."""
    cosine = max((c.vector_score or 0.0 for c in pq.raw_candidates), default=0.0)
    words = {stem(w) for w in keywords_of(pq.rewritten_query or pq.original_query)}
    coverage = 0.0
    if words:
        for src in sources:
            have = {stem(w) for w in keywords_of(src.content)}
            coverage = max(coverage, len(words & have) / len(words))
    relevant = bool(sources) and (cosine >= MIN_RELEVANT_COSINE or coverage >= MIN_KEYWORD_COVERAGE)
    return {"relevant": relevant, "best_vector_cosine": round(float(cosine), 4),
            "keyword_coverage": round(coverage, 3)}


def should_withhold(verdicts: Sequence[SentenceVerdict]) -> bool:
    claims = [v for v in verdicts if v.support != Support.NO_CLAIM]
    if not claims:
        return False
    return support_ratio(list(verdicts)) < MIN_SUPPORT_RATIO or claims[0].support == Support.UNSUPPORTED


class Answerer:
    """Drives one chat client over the pipeline's sources. Safe to reuse across questions."""

    def __init__(
        self,
        pipeline: RagPipeline,
        client: ChatClient,
        options: ChatOptions | None = None,
        *,
        embed: Callable[[list[str]], Any] | None = None,
    ) -> None:
        """`embed` (the embedder's: normalised rows) lets every sentence of the answer be checked
        by meaning as well as words (edgechat.core.answering.verify); without it, words only."""
        self.pipeline = pipeline
        self.client = client
        self.options = options or ChatOptions()
        self.embed = embed

    def stream(
        self,
        request: RagRequest,
        *,
        history: Sequence[ChatMessage] = (),
        options: ChatOptions | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[ChatUpdate]:
        """Yield text deltas; the last update (done=True) carries citations and the response.

        `history` is the saved conversation (what was typed and answered); the retrieved
        context is added for this call only and never written back into it."""
        t0 = time.perf_counter()
        pq = self.pipeline.process(request)
        t_retrieved = time.perf_counter()
        base = options or self.options
        sources = list(pq.references)
        budget = max(256, self.client.context_length - base.max_new_tokens)
        fitted = fit_messages(request.query, sources, [m for m in history if not m.pinned], budget, self.client.count_tokens)
        kept = len(sources) - fitted.trimmed_sources
        sources = sources[:kept]
        # The sources reach the client on a copy of the options made for this call.
        call_options = dataclasses.replace(base, sources=tuple(sources))

        text = ""
        stop_reason = StopReason.EOS
        first_token: float | None = None
        rel: dict[str, Any] = {}
        abstained = False
        draft = ""
        draft_verdicts: list[SentenceVerdict] = []
        verdicts: list[SentenceVerdict] = []
        added_spans: list[tuple[int, int]] = []
        is_model = self.client.kind != ClientKind.EXTRACTIVE
        if pq.search_skipped and self.client.kind == ClientKind.EXTRACTIVE:
            text = NO_SEARCH_EXTRACTIVE  # small talk: there is nothing to quote
            yield ChatUpdate(delta=text, text=text)
        elif pq.search_skipped:
            text, stop_reason, first_token = yield from self._generate(fitted.messages, call_options, cancel)
        else:
            rel = relevance(pq, sources)
            if not rel["relevant"]:
                # Nothing relevant: the model is not asked; the closest passages are quoted.
                abstained = True
                text = self._not_found(NOT_IN_DOCUMENTS if sources else NOTHING_FOUND, request.query, sources)
                yield ChatUpdate(delta=text, text=text)
            else:
                text, stop_reason, first_token = yield from self._generate(fitted.messages, call_options, cancel)
                if not text and not sources:
                    text = NOTHING_FOUND
                    yield ChatUpdate(delta=text, text=text)
        own_citations = len(build_citations(text, sources).citations)  # what the writer wrote itself
        checked = not pq.search_skipped and bool(sources) and stop_reason != StopReason.CANCELLED
        if checked and not abstained:
            verdicts = verify(text, sources, self.embed)
            if is_model and should_withhold(verdicts):
                abstained = True
                draft, draft_verdicts = text, verdicts
                text = self._not_found(WITHHELD, request.query, sources)
            elif is_model:
                text, verdicts, added_spans = attribute(text, verdicts)
        if checked and abstained:
            verdicts = verify(text, sources, self.embed)
        added = sum(len(v.markers_added) for v in verdicts)
        cites = build_citations(text, sources)
        added_at = {s for s, _ in added_spans}
        for c in cites.citations:
            c.added = bool(c.spans) and all(s in added_at for s, _ in c.spans)
        ratio = support_ratio(verdicts)
        all_supported = all(v.support != Support.UNSUPPORTED for v in verdicts)
        t_end = time.perf_counter()
        diagnostics = {
            "retrieval_seconds": t_retrieved - t0,
            "first_token_seconds": None if first_token is None else first_token - t_retrieved,
            "total_seconds": t_end - t0,
            "evicted_turns": fitted.evicted_turns,
            "trimmed_sources": fitted.trimmed_sources,
            "prompt_tokens": fitted.tokens,
            "history": fitted.diagnostics,
            "client": self.client.name,
            "markers_added": added,  # by attribution (verify.py), after the model finished
            "model_citations": own_citations,  # accepted citations the writer wrote itself
            "relevance": rel,
            "support_ratio": ratio,
            "draft_support_ratio": support_ratio(draft_verdicts) if draft else None,
        }
        stats = getattr(self.client, "last_stats", None)
        if isinstance(stats, dict):
            diagnostics["generation"] = dict(stats)
        pq.diagnostics.setdefault("answer", {}).update(diagnostics)
        response = ChatResponse(
            text=text,
            sources=sources,
            citations=cites.citations,
            unmatched_markers=cites.unmatched,
            grounded=checked and not abstained and all_supported and bool(cites.citations),
            stop_reason=stop_reason,
            processed=pq,
            diagnostics=diagnostics,
            verdicts=verdicts,
            support_ratio=ratio,
            abstained=abstained,
            draft=draft,
            draft_verdicts=draft_verdicts,
        )
        yield ChatUpdate(done=True, text=text, stop_reason=stop_reason, citations=cites.citations, response=response)

    def _generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions, cancel: threading.Event | None
    ) -> Generator[ChatUpdate, None, tuple[str, StopReason, float | None]]:
        """Stream the client's answer; return (text, stop reason, time of the first token)."""
        text = ""
        stop_reason = StopReason.EOS
        first_token: float | None = None
        for upd in self.client.stream(messages, options, cancel):
            if upd.delta:
                if first_token is None:
                    first_token = time.perf_counter()
                text += upd.delta
                yield ChatUpdate(delta=upd.delta, text=text)
            if upd.done:
                stop_reason = upd.stop_reason or StopReason.EOS
                break
        return text, stop_reason, first_token

    def _not_found(self, sentence: str, question: str, sources: Sequence[Source]) -> str:
        """The plain "not in your documents" sentence, then the closest passages quoted."""
        if not sources:
            return sentence
        quoter = ExtractiveClient(types.SimpleNamespace(embed=self.embed) if self.embed is not None else None)
        quotes = quoter.answer_sentences(question, list(sources)[:MAX_QUOTES_SOURCES])
        if not quotes:
            return sentence
        return sentence + "\n\n" + CLOSEST + "\n" + "\n".join(f"{q} [{n}]" for q, n in quotes)
