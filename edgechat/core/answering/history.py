"""Fitting a conversation into a model's context window. `reduce_history` is pure (it never
changes its inputs): it never evicts system messages, pinned messages (the evidence) or the newest
non-pinned user message (the question), and evicts whole turns (a user message and the assistant
messages after it), oldest first, until the rest fits. The evidence is a few short quotes
(prompt.py), so it is never cut; when the protected messages alone do not fit, it returns
``fits=False`` with ``diagnostics["reason"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edgechat.core.records import ChatMessage, Role

__all__ = ["ReducedHistory", "reduce_history", "split_turns"]


@dataclass
class ReducedHistory:
    messages: list[ChatMessage]
    evicted_turns: int = 0
    fits: bool = True
    diagnostics: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0  # what `messages` cost, overheads included


def split_turns(messages: Sequence[ChatMessage]) -> list[list[int]]:
    """Indices of the evictable messages of `messages`, grouped into turns, oldest first. The
    protected ones (system, pinned, the question) belong to no turn and do not break one."""
    question = max((i for i, m in enumerate(messages) if m.role == Role.USER and not m.pinned), default=None)
    turns: list[list[int]] = []
    for i, m in enumerate(messages):
        if m.role == Role.SYSTEM or m.pinned or i == question:
            continue
        if m.role == Role.USER or not turns:
            turns.append([i])
        else:
            turns[-1].append(i)
    return turns


def reduce_history(messages: Sequence[ChatMessage], budget: int, count_tokens: Callable[[str], int],
                   per_message_overhead: int = 4) -> ReducedHistory:
    """Fit `messages` into `budget` tokens (see the module docstring for the rules). A message costs
    ``count_tokens(content) + per_message_overhead``."""
    msgs = list(messages)
    costs = [count_tokens(m.content) + per_message_overhead for m in msgs]
    turns = split_turns(msgs)
    total = sum(costs)
    protected = total - sum(costs[i] for turn in turns for i in turn)
    evicted = 0
    while total > budget and evicted < len(turns):
        total -= sum(costs[i] for i in turns[evicted])
        evicted += 1
    dropped = {i for turn in turns[:evicted] for i in turn}
    diagnostics: dict[str, Any] = {"budget": budget, "protected_tokens": protected, "tokens": total,
                                   "evicted_messages": len(dropped)}
    if total > budget:
        diagnostics["reason"] = (f"the system prompt, evidence and question alone need {protected} tokens, "
                                 f"more than the budget of {budget}")
    return ReducedHistory(messages=[m for i, m in enumerate(msgs) if i not in dropped], evicted_turns=evicted,
                          fits=total <= budget, diagnostics=diagnostics, tokens=total)
