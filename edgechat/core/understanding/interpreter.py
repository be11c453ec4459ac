"""The turn interpreter the search pipeline calls: the gate decides whether to search, then the
model rewriter (capable model) or the deterministic one makes the query standalone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgechat.core.records import ChatMessage
from edgechat.core.search.pipeline import QueryUnderstanding
from edgechat.core.understanding.gate import SearchGate
from edgechat.core.understanding.model_rewriter import ModelRewriter, is_capable
from edgechat.core.understanding.rewriter import DeterministicRewriter


class ConversationInterpreter:
    """The pipeline's TurnInterpreter: gate first, then the model or deterministic rewriter.

    client: the chat client answering this turn (or a callable returning it); its model
        rewrites only when `is_capable(client)`, or always with use_model=True (benchmarks),
        never with use_model=False.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        gate: SearchGate | None = None,
        rewriter: DeterministicRewriter | None = None,
        use_model: bool | None = None,
        model_timeout: float = 10.0,
    ) -> None:
        self.gate = gate or SearchGate()
        self.rewriter = rewriter or DeterministicRewriter(self.gate)
        self._client = client
        self.use_model = use_model
        self.model_timeout = model_timeout

    @property
    def client(self) -> Any:
        c = self._client
        return c() if callable(c) and not hasattr(c, "stream") else c

    def model_rewriter(self) -> ModelRewriter | None:
        client = self.client
        if client is None or self.use_model is False:
            return None
        if self.use_model or is_capable(client):
            return ModelRewriter(client, timeout=self.model_timeout, fallback=self.rewriter)
        return None

    def interpret(self, query: str, recent: Sequence[ChatMessage]) -> QueryUnderstanding:
        reason = self.gate.check(query)
        if reason is not None:
            return QueryUnderstanding(search=False, query=None, keywords=[], raw=None, reason=reason,
                                      details={"gate": reason})
        rewriter: Any = self.model_rewriter() or self.rewriter
        rw = rewriter.rewrite(query, recent)
        rewritten = rw.query if rw.method != "none" else None
        details: dict[str, Any] = {
            "rewriter": rw.method,
            "followup": rw.followup,
            "triggers": rw.triggers,
            "subject": rw.subject,
            "seconds": round(rw.seconds, 4),
        }
        if rw.fallback:
            details["fallback"] = rw.fallback
        return QueryUnderstanding(search=True, query=rewritten, keywords=rw.keywords, raw=rw.raw,
                                  reason="follow-up rewritten" if rw.followup else "", details=details)


def default_interpreter(client: Any = None) -> ConversationInterpreter:
    """What an Engine uses unless told otherwise."""
    return ConversationInterpreter(client)
