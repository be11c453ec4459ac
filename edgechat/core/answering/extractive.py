"""A chat client with no model: the evidence is the answer.

It writes the quotes the answerer selected (`ChatOptions.evidence`, best first), each on a line of
its own with its source's marker: ``"The museum opens at 9 am. [1]"``. Deterministic and instant;
the answer's check and citations treat it like any other client's text.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, StopReason

__all__ = ["NO_MATCH_TEXT", "ExtractiveClient"]

NO_MATCH_TEXT = "Nothing in your library matched this question, so I cannot answer it from your documents."
MAX_QUOTED = 3


class ExtractiveClient:
    """`ChatClient` that quotes the evidence instead of generating."""

    name = "extractive"
    kind = ClientKind.EXTRACTIVE
    context_length = 1_000_000

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages: Sequence[ChatMessage], options: ChatOptions,
               cancel: threading.Event | None = None) -> Iterator[ChatUpdate]:
        text = ""
        pieces = [f"{quote} [{n}]" for n, quote in options.evidence[:MAX_QUOTED]] or [NO_MATCH_TEXT]
        budget = max(1, int(options.max_new_tokens))
        used = 0
        for piece in pieces:
            if cancel is not None and cancel.is_set():
                yield ChatUpdate(done=True, text=text, stop_reason=StopReason.CANCELLED)
                return
            cost = self.count_tokens(piece)
            if used + cost > budget:
                if not text:  # not even one quote fits: its first words
                    text = " ".join(piece.split()[:budget])
                    yield ChatUpdate(delta=text, text=text)
                yield ChatUpdate(done=True, text=text, stop_reason=StopReason.MAX_TOKENS)
                return
            delta = piece if not text else "\n" + piece
            text += delta
            used += cost
            yield ChatUpdate(delta=delta, text=text)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)
