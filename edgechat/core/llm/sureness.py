"""How sure a model was of what it wrote: the mean probability it gave the tokens of a stretch of
its text (`ChatUpdate.token_p`), counting the tokens of words only. A figure's or a marker's tokens
say little: a model often hesitates over digits it then copies right."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["Sureness"]

_LETTER_RE = re.compile(r"[^\W\d_]")


class Sureness:
    """Fed every streamed delta of one text, in order, with its tokens' probabilities."""

    def __init__(self) -> None:
        self._length = 0
        self._tokens: list[tuple[int, float]] = []  # (where a word's token ends in the text, its probability)

    def add(self, delta: str, probabilities: Sequence[float]) -> None:
        self._length += len(delta)
        if _LETTER_RE.search(delta):
            self._tokens += [(self._length, p) for p in probabilities]

    def of(self, start: int, end: int) -> float | None:
        """The mean probability of the word tokens that end within text[start:end]; None without any."""
        found = [p for at, p in self._tokens if start < at <= end]
        return sum(found) / len(found) if found else None
