from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from edgechat.core.answering.history import ReducedHistory, reduce_history, split_turns
from edgechat.core.records import ChatMessage, Role

S, U, A = Role.SYSTEM, Role.USER, Role.ASSISTANT


def words(text: str) -> int:
    return len(text.split())


def chars(text: str) -> int:
    return len(text)


def msg(role: Role, n_words: int, tag: str, pinned: bool = False) -> ChatMessage:
    return ChatMessage(role, " ".join([tag] * n_words), pinned=pinned)


def total(messages, count=words, overhead=4) -> int:
    return sum(count(m.content) + overhead for m in messages)


def test_everything_fits_nothing_changes():
    messages = [msg(S, 5, "s"), msg(U, 3, "u1"), msg(A, 3, "a1"), msg(U, 3, "q")]
    r = reduce_history(messages, 1000, words)
    assert isinstance(r, ReducedHistory)
    assert r.messages == messages
    assert r.fits and r.evicted_turns == 0
    assert r.tokens == total(messages)


def test_evicts_oldest_whole_turns_first():
    sys_, ctx, q = msg(S, 5, "s"), msg(U, 10, "ctx", pinned=True), msg(U, 3, "q")
    t1 = [msg(U, 10, "u1"), msg(A, 10, "a1")]
    t2 = [msg(U, 10, "u2"), msg(A, 10, "a2")]
    t3 = [msg(U, 10, "u3"), msg(A, 10, "a3")]
    messages = [sys_, *t1, *t2, *t3, ctx, q]
    budget = total([sys_, ctx, q, *t3]) + 5  # room for exactly one turn
    r = reduce_history(messages, budget, words)
    assert r.messages == [sys_, *t3, ctx, q]
    assert r.evicted_turns == 2 and r.fits
    assert r.diagnostics["evicted_messages"] == 4
    assert r.tokens <= budget


def test_input_not_mutated():
    messages = [msg(S, 5, "s"), msg(U, 30, "u1"), msg(A, 30, "a1"), msg(U, 3, "q")]
    copy = list(messages)
    reduce_history(messages, 20, words)
    assert messages == copy


def test_turns_grouping():
    messages = [
        msg(A, 1, "greeting"),
        msg(S, 1, "s"),
        msg(U, 1, "u1"),
        msg(A, 1, "a1"),
        msg(A, 1, "a1b"),
        msg(U, 1, "ctx", pinned=True),
        msg(U, 1, "u2"),
        msg(U, 1, "q"),
    ]
    assert split_turns(messages) == [[0], [2, 3, 4], [6]]


def test_the_evidence_is_never_cut():
    messages = [msg(S, 50, "s"), msg(U, 50, "ctx", pinned=True), msg(U, 5, "q")]
    r = reduce_history(messages, 40, words)
    assert not r.fits
    assert r.messages == messages
    assert "117 tokens" in r.diagnostics["reason"]


def test_cannot_fit_no_context():
    messages = [msg(S, 50, "s"), msg(U, 1, "u"), msg(A, 1, "a"), msg(U, 50, "q")]
    r = reduce_history(messages, 40, words)
    assert not r.fits and r.evicted_turns == 1
    assert r.messages == [messages[0], messages[3]]
    assert "more than the budget of 40" in r.diagnostics["reason"]


def test_empty_messages():
    r = reduce_history([], 10, words)
    assert r.messages == [] and r.fits and r.tokens == 0


# --------------------------------------------------------------------------- properties


@dataclass
class Conversation:
    messages: list[ChatMessage]
    turns: list[list[int]]  # indices of each generated turn, oldest first
    protected: list[int]
    sources: list[str]
    context_index: int | None


word = st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "x"])
text = st.lists(word, min_size=0, max_size=12).map(" ".join)


@st.composite
def conversations(draw) -> Conversation:
    messages: list[ChatMessage] = []
    turns: list[list[int]] = []
    protected: list[int] = []

    def unique() -> str:  # a distinct first word, so the output maps back unambiguously
        return f"m{len(messages)} {draw(text)}"

    if draw(st.booleans()):
        protected.append(len(messages))
        messages.append(ChatMessage(S, unique()))
    for _ in range(draw(st.integers(0, 6))):
        turn = [len(messages)]
        messages.append(ChatMessage(U, unique()))
        for _ in range(draw(st.integers(0, 2))):
            turn.append(len(messages))
            messages.append(ChatMessage(A, unique()))
        turns.append(turn)
    sources = draw(st.lists(text, max_size=5))
    context_index = None
    if draw(st.booleans()):
        context_index = len(messages)
        protected.append(len(messages))
        messages.append(ChatMessage(U, "\n".join(sources), pinned=True))
    protected.append(len(messages))
    messages.append(ChatMessage(U, unique()))
    return Conversation(messages, turns, protected, sources, context_index)


counters = st.sampled_from([words, chars])


def check_common(conv: Conversation, r: ReducedHistory, count, overhead: int) -> None:
    out = r.messages
    # tokens reported are what the messages cost
    assert r.tokens == total(out, count, overhead)
    # relative order preserved: map each output message back to a distinct input index
    indices = []
    pos = 0
    for m in out:
        while pos < len(conv.messages) and not (
            conv.messages[pos] == m
            or (pos == conv.context_index and m.pinned and conv.messages[pos].pinned)
        ):
            pos += 1
        assert pos < len(conv.messages), "output is not a subsequence of the input"
        indices.append(pos)
        pos += 1
    kept = set(indices)
    # system, pinned and the question are always kept
    for i in conv.protected:
        assert i in kept
    # only whole turns are evicted, oldest first
    evicted = [t for t in conv.turns if not (set(t) & kept)]
    for t in conv.turns:
        assert set(t) <= kept or not (set(t) & kept), "a turn was split"
    assert evicted == conv.turns[: len(evicted)]
    assert r.evicted_turns == len(evicted)
    if r.fits:
        assert r.tokens <= r.diagnostics["budget"]


@settings(max_examples=300)
@given(conversations(), st.integers(0, 400), counters, st.integers(0, 6))
def test_property_evicts_the_fewest_oldest_turns(conv, budget, count, overhead):
    r = reduce_history(conv.messages, budget, count, per_message_overhead=overhead)
    check_common(conv, r, count, overhead)
    protected_cost = total([conv.messages[i] for i in conv.protected], count, overhead)
    assert r.fits == (protected_cost <= budget)
    if r.fits and r.evicted_turns:
        # minimal: keeping the newest evicted turn would not have fitted
        last = conv.turns[r.evicted_turns - 1]
        extra = total([conv.messages[i] for i in last], count, overhead)
        assert r.tokens + extra > budget
