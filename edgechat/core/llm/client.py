"""The chat client interface: something that turns a list of messages into streamed text.

Implementations:
- edgechat.core.llm.genai_client.GenaiChatClient: a local onnxruntime-genai model, in process.
- edgechat.core.answering.extractive.ExtractiveClient: no model; quotes the best sentences of the sources.
- edgechat.core.llm.server_client.ServerChatClient: an OpenAI-compatible model server, over HTTP.

A client never retrieves and never builds citations: the search pipeline
(edgechat.core.search.pipeline) finds the sources before it is called, and the answerer
(edgechat.core.answering.answer) builds the citations from its text after it. The sources of the
current call reach a client only through `options.sources` (a per-call copy of the caller's
options).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, Role


@runtime_checkable
class ChatClient(Protocol):
    name: str
    kind: ClientKind  # a language model, or the extractive answerer (no model)

    @property
    def context_length(self) -> int:
        """Tokens the model can see, prompt and answer together."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens `text` costs in this client's prompt (used by the history reducer)."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        options: ChatOptions,
        cancel: threading.Event | None = None,
    ) -> Iterator[ChatUpdate]:
        """Yield text deltas as they are generated; the last update has done=True and a
        stop_reason ("eos", "max_tokens", "context", "cancelled"). Never blocks past one token
        once `cancel` is set."""
        ...


def prepare_messages(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """Messages as the plain dicts a chat template takes, with each pinned message merged into
    the user message that follows it (the local models' and the servers' alike)."""
    out: list[dict[str, str]] = []
    pending: list[str] = []  # pinned contents waiting for the next user message
    for m in messages:
        role = m.role.value if isinstance(m.role, Role) else str(m.role)
        if m.pinned:
            pending.append(m.content)
            continue
        if role == Role.USER.value and pending:
            out.append({"role": role, "content": "\n\n".join([*pending, m.content])})
            pending = []
            continue
        if pending:  # pinned context followed by a non-user message: keep it as its own turn
            out.append({"role": Role.USER.value, "content": "\n\n".join(pending)})
            pending = []
        out.append({"role": role, "content": m.content})
    if pending:
        out.append({"role": Role.USER.value, "content": "\n\n".join(pending)})
    return out
