"""Short prompts: each source's sentences that bear on the question, not its whole passage.

A local model's time to first token is the time it takes to read the prompt (about 30 tokens/s
for Qwen2.5-Coder-1.5B on two cores), so five 200-token passages cost half a minute before a
word appears. `focus` keeps, from each source, the sentences that share the most (IDF-weighted)
words with the question, then the sentences next to those, in their own order, within a token
budget shared by the sources (better-ranked sources get more of it); gaps between kept sentences
are shown as " ... ". A sentence that shares no word with the question and is next to none
that does is left out even when the budget would allow it.

Only the prompt is shortened. The sources the answer is checked against, cited and
highlighted from stay whole, so a claim the model takes from a kept sentence is supported
by the same words in the full passage.

A "sentence" is what `split_sentences` finds; a long one without sentence ends (a table that
came out of a PDF as rows of figures) is cut at its line breaks so that a table row can be
kept without the whole table.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from edgechat.core.answering.extractive import asked_rows, quote_text, split_sentences
from edgechat.core.records import Source
from edgechat.core.search.retrieval import keywords_of, stem

__all__ = ["DEFAULT_BUDGET", "focus"]

#: Tokens of source text in the prompt, all sources together (see benchmarks.answers --focus).
DEFAULT_BUDGET = 360
LONG_PIECE = 60  # tokens: a longer "sentence" is cut at its line breaks
GAP = "..."  # between kept sentences that are not next to each other


def _pieces(text: str, count_tokens: Callable[[str], int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in split_sentences(text):
        if count_tokens(text[s:e]) <= LONG_PIECE or "\n" not in text[s:e]:
            out.append((s, e))
            continue
        pos = s
        for line in text[s:e].split("\n"):
            if line.strip():
                a = pos + (len(line) - len(line.lstrip()))
                out.append((a, a + len(line.strip())))
            pos += len(line) + 1
    return out


def _terms(text: str) -> set[str]:
    return {stem(w) for w in keywords_of(text)}


def _select(score: list[float], costs: list[int], share: int) -> list[int]:
    """Which pieces to keep, in document order: the ones sharing words with the question, best
    first, then the ones right after and before them, while they fit in `share` tokens. The best
    piece is kept even when it alone is too long (focus() keeps its start)."""
    order = sorted((j for j in range(len(score)) if score[j] > 0), key=lambda j: (-score[j], j)) or [0]
    order += [k for j in list(order) for k in (j + 1, j - 1) if 0 <= k < len(score) and score[k] == 0]
    keep: list[int] = []
    used = 0
    for j in dict.fromkeys(order):
        if not keep and costs[j] > share:
            return [j]
        if used + costs[j] <= share:
            keep.append(j)
            used += costs[j]
    return sorted(keep)


def _put_row_first(score: list[float], said: list[str], row: str, caption: str) -> None:
    """Scores that keep the row first, then its table's caption, then the column headings between
    them (short lines: "Three Months Ended", "July 1, 2023")."""
    top = max(score, default=0.0)
    at = [j for j, t in enumerate(said) if t == row]
    if not at:
        return
    score[at[0]] = top + 3
    cap = next((j for j in range(at[0] - 1, -1, -1) if caption and said[j] == caption), None)
    if cap is None:
        return
    score[cap] = top + 2
    for j in range(cap + 1, at[0]):
        if len(said[j].split()) <= 8:
            score[j] = top + 1


def focus(
    question: str,
    sources: Sequence[Source],
    count_tokens: Callable[[str], int],
    budget: int = DEFAULT_BUDGET,
) -> list[Source]:
    """Copies of `sources` whose content is only the sentences that bear on `question`, within
    `budget` tokens in all. A source that fits its share whole is kept whole."""
    if not sources or budget <= 0:
        return list(sources)
    wanted = _terms(question)
    pieces = [_pieces(s.content, count_tokens) for s in sources]
    texts = [[s.content[a:b] for a, b in ps] for s, ps in zip(sources, pieces)]
    terms = [[_terms(t) for t in ts] for ts in texts]
    n_pieces = sum(len(t) for t in terms) or 1
    df: dict[str, int] = {}
    for per_source in terms:
        for ts in per_source:
            for w in ts & wanted:
                df[w] = df.get(w, 0) + 1
    idf = {w: math.log(1 + n_pieces / (1 + df.get(w, 0))) for w in wanted}
    # Shares of the budget by rank: 1, 1/2, 1/3 ... normalised.
    weights = [1 / (i + 1) for i in range(len(sources))]
    total = sum(weights)
    # A question that asks for an amount: the row of figures that names it, and its table's
    # caption, come first in their source (a row shares one or two words with the question and
    # loses to wordier sentences, yet it is the answer).
    # The source that holds it gets the best-ranked source's share: a model asked for a figure
    # must read the row and what its columns are.
    rows = asked_rows(question, sources)
    if rows:
        holders = [r[0] for r in rows]
        weights = [weights[0] if any(s is h for h in holders) else w for s, w in zip(sources, weights)]
        total = sum(weights)
    out: list[Source] = []
    for i, source in enumerate(sources):
        share = max(1, int(budget * weights[i] / total))
        if count_tokens(source.content) <= share or not pieces[i]:
            out.append(source)
            continue
        score = [sum(idf[w] for w in ts & wanted) for ts in terms[i]]
        for holder, row, caption in reversed(rows):  # the best row is raised last, so highest
            if holder is source:
                _put_row_first(score, [quote_text(t) for t in texts[i]], row, caption)
        costs = [count_tokens(t) for t in texts[i]]
        keep = _select(score, costs, share)
        parts: list[str] = []
        for n, j in enumerate(keep):
            piece = " ".join(texts[i][j].split())
            if costs[j] > share and count_tokens(piece) > share:  # the best piece alone is too long: its start
                words = piece.split()
                piece = " ".join(words[: max(1, int(len(words) * share / count_tokens(piece)))])
            if n and j != keep[n - 1] + 1:
                parts.append(GAP)
            parts.append(piece)
        if keep[0] > 0:
            parts.insert(0, GAP)
        if keep[-1] < len(pieces[i]) - 1:
            parts.append(GAP)
        out.append(dataclasses.replace(source, content=" ".join(parts)))
    return out
