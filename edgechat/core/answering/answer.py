"""Question -> processed query (edgechat.core.search.pipeline) -> prompt under a token budget ->
streamed answer -> markers supplied where a source supports a sentence (attribution.py) ->
citations (citations.py)."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from edgechat.core.answering.attribution import attribute
from edgechat.core.llm.client import ChatClient
from edgechat.core.answering.citations import build_citations
from edgechat.core.search.pipeline import RagPipeline
from edgechat.core.answering.prompt import fit_messages
from edgechat.core.records import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatUpdate,
    ClientKind,
    RagRequest,
    StopReason,
)

NOTHING_FOUND = "Nothing in your library matched this question, so there is nothing to cite."
NO_SEARCH_EXTRACTIVE = (
    "That doesn't look like a question about your documents, so nothing was searched. "
    "Without a language model EdgeChat can only answer from your documents: ask about them."
)


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
        """`embed` (the embedder's) enables supplying markers a model left out, where a
        source demonstrably supports the sentence (edgechat.core.answering.attribution)."""
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
        if pq.search_skipped and self.client.kind == ClientKind.EXTRACTIVE:
            text = NO_SEARCH_EXTRACTIVE  # small talk: there is nothing to quote
            yield ChatUpdate(delta=text, text=text)
        elif sources or self.client.kind != ClientKind.EXTRACTIVE:
            for upd in self.client.stream(fitted.messages, call_options, cancel):
                if upd.delta:
                    if first_token is None:
                        first_token = time.perf_counter()
                    text += upd.delta
                    yield ChatUpdate(delta=upd.delta, text=text)
                if upd.done:
                    stop_reason = upd.stop_reason or StopReason.EOS
                    break
        if not text and not sources and not pq.search_skipped:
            text = NOTHING_FOUND
            yield ChatUpdate(delta=text, text=text)
        added = 0
        own_citations = len(build_citations(text, sources).citations)  # what the model wrote itself
        if self.embed is not None and sources and text and stop_reason != StopReason.CANCELLED and self.client.kind != ClientKind.EXTRACTIVE:
            text, added = attribute(text, sources, self.embed)
        cites = build_citations(text, sources)
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
            "markers_added": added,  # by attribution, after the model finished
            "model_citations": own_citations,  # accepted citations the model wrote itself
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
            grounded=bool(sources) and bool(cites.citations),
            stop_reason=stop_reason,
            processed=pq,
            diagnostics=diagnostics,
        )
        yield ChatUpdate(done=True, text=text, stop_reason=stop_reason, citations=cites.citations, response=response)
