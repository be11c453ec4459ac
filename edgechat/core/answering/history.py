"""Fitting a conversation into a model's context window. `reduce_history` is pure (it never
changes its inputs) and, in order: (1) never evicts system messages, pinned messages (the last
is the evidence) or the newest non-pinned user message (the question); (2) evicts whole turns (a
user message and the assistant messages after it), oldest first, until the rest fits; (3) when
the protected messages alone do not fit, rebuilds the evidence with fewer sources
(`trim_context(keep)` keeps the `keep` best) and gives room left over back to the newest evicted
turns; (4) when nothing fits, returns ``fits=False`` with ``diagnostics["reason"]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edgechat.core.records import ChatMessage, Role

__all__ = ["ReducedHistory", "reduce_history", "split_turns"]

@dataclass
class ReducedHistory:
    messages: list[ChatMessage]
    evicted_turns: int = 0
    trimmed_sources: int = 0
    fits: bool = True
    diagnostics: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0  # what `messages` cost, overheads included


def _question_index(messages: Sequence[ChatMessage]) -> int | None:
    return next((i for i in reversed(range(len(messages)))
                 if messages[i].role == Role.USER and not messages[i].pinned), None)


def _is_protected(i: int, m: ChatMessage, question: int | None) -> bool:
    return m.role == Role.SYSTEM or m.pinned or i == question


def split_turns(messages: Sequence[ChatMessage]) -> list[list[int]]:
    """Indices of the evictable messages of `messages`, grouped into turns, oldest first.

    Protected messages (system, pinned, the newest non-pinned user message) belong to no turn
    and do not break one.
    """
    question = _question_index(messages)
    turns: list[list[int]] = []
    for i, m in enumerate(messages):
        if _is_protected(i, m, question):
            continue
        if m.role == Role.USER or not turns:
            turns.append([i])
        else:
            turns[-1].append(i)
    return turns


def reduce_history(messages: Sequence[ChatMessage], budget: int, count_tokens: Callable[[str], int],
                   per_message_overhead: int = 4, trim_context: Callable[[int], str] | None = None,
                   context_sources: int = 0) -> ReducedHistory:
    """Fit `messages` into `budget` tokens (see the module docstring for the rules).

    A message costs ``count_tokens(content) + per_message_overhead``. `context_sources` is
    how many sources the pinned context holds, of which `trim_context` keeps the best."""
    msgs = list(messages)
    costs = [count_tokens(m.content) + per_message_overhead for m in msgs]
    question = _question_index(msgs)
    turns = split_turns(msgs)
    protected = [i for i, m in enumerate(msgs) if _is_protected(i, m, question)]
    protected_cost = sum(costs[i] for i in protected)
    turn_costs = [sum(costs[i] for i in turn) for turn in turns]
    diagnostics: dict[str, Any] = {"budget": budget, "original_tokens": sum(costs), "protected_tokens": protected_cost,
                                   "turns": len(turns)}

    # 1-2. Evict the oldest whole turns until the rest fits.
    total = sum(costs)
    evicted = 0
    while total > budget and evicted < len(turns):
        total -= turn_costs[evicted]
        evicted += 1
    fits = total <= budget
    replaced: dict[int, ChatMessage] = {}
    trimmed = 0
    reason = ""
    pinned = [i for i in protected if msgs[i].pinned]
    if fits:
        pass
    elif not pinned:
        # 4. Everything evictable is gone and the protected messages still do not fit.
        reason = (f"system prompt and question alone need {protected_cost} tokens, "
                  f"more than the budget of {budget}; there is no pinned context to trim")
    elif trim_context is None:
        reason = (f"system prompt, pinned context and question need {protected_cost} tokens, "
                  f"more than the budget of {budget}, and the context cannot be rebuilt")
    else:
        # 3. Drop the pinned context's lowest-ranked sources until it fits.
        ctx = pinned[-1]
        others = protected_cost - costs[ctx]
        available = max(0, context_sources)
        diagnostics["context_sources"] = available
        found = None  # the context rebuilt with the most sources that fit (with none, when none do)
        for keep in range(available - 1, -1, -1):
            text = trim_context(keep)
            cost = count_tokens(text) + per_message_overhead
            if cost <= budget - others or keep == 0:
                found = keep, text, cost
                break
        if found is not None:
            keep, text, cost = found
            trimmed = available - keep
            replaced[ctx] = dataclasses.replace(msgs[ctx], content=text)
            total = others + cost
            fits = total <= budget
            diagnostics["kept_sources"] = keep
        if fits:
            diagnostics["note"] = (f"dropped the {trimmed} lowest-ranked source(s) of the pinned context "
                                   f"to fit {budget} tokens; {available - trimmed} kept")
            # Give the room left back to the newest evicted turns, newest first.
            while evicted > 0 and total + turn_costs[evicted - 1] <= budget:
                evicted -= 1
                total += turn_costs[evicted]
        else:
            reason = (f"even with no sources the system prompt, context and question need "
                      f"{total if found else protected_cost} tokens, more than the budget of {budget}")

    dropped = {i for turn in turns[:evicted] for i in turn}
    out = [replaced.get(i, m) for i, m in enumerate(msgs) if i not in dropped]
    diagnostics.update({"tokens": total, "evicted_turns": evicted, "evicted_messages": len(dropped),
                        "trimmed_sources": trimmed, "fits": fits})
    if reason:
        diagnostics["reason"] = reason
    return ReducedHistory(messages=out, evicted_turns=evicted, trimmed_sources=trimmed, fits=fits,
                          diagnostics=diagnostics, tokens=total)
