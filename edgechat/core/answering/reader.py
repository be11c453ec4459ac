"""Does the evidence say what was asked? A local model's yes or no, read from its first token.

The judge (judge.py) checks that each sentence the writer gives is supported by its evidence. It
cannot tell a true sentence that answers the question from a true sentence of the same passage
that answers something else (another payment, another setting), and no signal of the evidence
selector tells them apart either. A language model asked only that, "does this text state the
answer to this question?", does: its probability of beginning "Yes" separates the evidence that
holds the answer from the evidence that does not far better than the evidence score
(docs/answers.md gives the figures).

When it is switched on (EDGECHAT_READER=on: edgechat.core.llm.manager), the reader is asked once
per question, before the writer, with the quotes the writer is given (the first few). `Answerer`
acts on its probability:

- below `ask_writer`: the documents are taken not to answer; nothing is written;
- at or above `show_evidence`: when none of the writer's sentences holds (or it declines), the
  quotes themselves are shown as what the documents say.

The thresholds are calibrated per reading model on the tuning halves (benchmarks/answers.py).
A model without calibrated thresholds is not used as a reader.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from edgechat.core.records import ChatMessage, Role

__all__ = ["READERS", "Chooser", "EvidenceReader", "Thresholds"]

SYSTEM = "You are a careful reader."
QUESTION = "Does the text state the answer to the question? Reply Yes or No."
READ_QUOTES = 3  # the quotes it reads: those the extractive client would show


@dataclasses.dataclass(frozen=True)
class Thresholds:
    ask_writer: float  # below it, nothing is written: the documents are taken not to answer
    show_evidence: float  # at or above it, the quotes are shown when the writer's words do not hold


#: Per reading model, calibrated on the tuning halves with the default writer.
READERS = {"qwen2.5-coder-1.5b-instruct-int4": Thresholds(ask_writer=0.7, show_evidence=0.8)}


class Chooser(Protocol):
    name: str

    def choose(self, messages: Sequence[ChatMessage], choices: Sequence[str]) -> list[float]: ...


class EvidenceReader:
    """Asks a local model whether the quotes state the answer to the question."""

    def __init__(self, model: Chooser, thresholds: Thresholds | None = None) -> None:
        """`thresholds`: the model's calibrated ones unless given."""
        found = thresholds or READERS.get(model.name)
        if found is None:
            raise ValueError(f"{model.name} has no calibrated thresholds as a reader")
        self.model = model
        self.thresholds = found

    @property
    def name(self) -> str:
        return self.model.name

    @staticmethod
    def messages(question: str, quotes: Sequence[str]) -> list[ChatMessage]:
        text = "\n".join(" ".join(q.split()) for q in quotes[:READ_QUOTES])
        return [ChatMessage(Role.SYSTEM, SYSTEM),
                ChatMessage(Role.USER, f"Text: {text}\n\nQuestion: {question}\n\n{QUESTION}")]

    def answers(self, question: str, quotes: Sequence[str]) -> float:
        """The probability that `quotes` state the answer to `question` (0 without quotes)."""
        if not quotes:
            return 0.0
        yes, _no = self.model.choose(self.messages(question, quotes), ("Yes", "No"))
        return yes
