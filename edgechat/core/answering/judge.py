"""One support judge: does the evidence say what a sentence of the answer says?

`judge(claim, quotes)` compares one sentence with the quotes it was written from, by principles that
hold for any document:

1. It states something: a sentence with no content word of its own beyond the question's, or one
   that only introduces what follows ("Here is what I found:"), makes no claim.
2. Its figures are in the evidence, and each in a quote that is about what the claim is about: a
   figure of a table row counts only where the row's heading (or its table's headings) shares a
   word with the claim, because a table is a grid of cells with headings whatever it reports.
3. Its names (words written as names: "Seward", "readLines") are in the evidence.
4. Its content is covered: most of its content words are in the quote that covers it best, or its
   meaning is close to that quote's (embedding cosine).
5. Negation agrees: a claim that says "not" about what its quote says plainly (or the reverse) is
   not supported.

Only the quotes the sentence can lean on are read: those of the sources it cites when it cites any
that hold evidence, else all the evidence. The result is a `SentenceVerdict` whose `evidence` names
the supporting quotes, so the window can highlight them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.answering.evidence import Quote
from edgechat.core.answering.words import figures, has_negation, names, terms
from edgechat.core.records import Evidence, Support

__all__ = ["Judgement", "judge", "marker_numbers"]

MIN_COVERAGE = 0.6  # share of the claim's own content words one quote (or two of one passage) must hold
MIN_MEANING = 0.72  # or the cosine of claim and quote, for a paraphrase

_INTRO_ENDINGS = (":",)


@dataclass
class Judgement:
    support: Support
    quotes: list[Quote] = field(default_factory=list)  # the quotes that support it, best first
    reason: str = ""

    def evidence(self) -> list[Evidence]:
        return [Evidence(q.source.ordinal, q.start, q.end) for q in self.quotes]


def marker_numbers(text: str) -> list[int]:
    out: list[int] = []
    for m in MARKER_RE.finditer(text):
        out.extend(int(n) for n in re.findall(r"\d+", m.group(1)))
    return out


def _bare(text: str) -> str:
    return " ".join(MARKER_RE.sub(" ", text).split())


def _row_heading_agrees(quote: Quote, claim_terms: set[str], figure: str) -> bool:
    """A figure taken from a table row fits the claim only if the row's heading or its table's
    headings say what the claim is about (share a content word with it)."""
    if not quote.row:
        return True
    heading = quote.text
    for f in figures(quote.text):
        heading = heading.replace(f, " ")
    words = terms(f"{quote.source.table_header} {heading}") - {figure}
    return bool(words & claim_terms)


def judge(
    claim: str,
    quotes: Sequence[Quote],
    question: str = "",
    embed: Callable[[list[str]], Any] | None = None,
) -> Judgement:
    """The verdict on one sentence of an answer (see the module docstring)."""
    bare = _bare(claim)
    question_terms = terms(question)
    claim_terms = terms(bare)
    own = claim_terms - question_terms
    if not claim_terms or bare.rstrip().endswith(_INTRO_ENDINGS) or (not own and not figures(bare)):
        return Judgement(Support.NO_CLAIM)
    if not quotes:
        return Judgement(Support.UNSUPPORTED, reason="there is no evidence to support it")
    cited = set(marker_numbers(claim))
    pool = [q for q in quotes if q.source.ordinal in cited] or list(quotes)

    # 2. figures, each in a quote about the same thing
    question_figures = set(figures(question))
    for f in figures(bare):
        holders = [q for q in pool if f in figures(q.text) or f in figures(q.source.table_header)]
        if not holders:
            if f in question_figures:
                continue
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is not in the evidence")
        if not any(_row_heading_agrees(q, claim_terms - {f}, f) for q in holders):
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is in a row about something else")

    # 3. names
    evidence_text = " ".join(f"{q.source.title} {q.source.table_header} {q.text}" for q in pool).lower()
    evidence_terms = terms(evidence_text)
    for name in names(bare) - names(question):
        if name not in evidence_text and not (terms(name) <= evidence_terms):
            return Judgement(Support.UNSUPPORTED, reason=f"\u201c{name}\u201d is not in the evidence")

    # 4. coverage by the best quote (with the next quote of its passage: a sentence may join two)
    def coverage(q: Quote) -> float:
        have = terms(q.reading) | terms(q.source.title)
        neighbours = [o for o in pool if o.source is q.source and o is not q]
        for o in neighbours:
            have |= terms(o.reading)
        target = own or claim_terms
        return len(target & have) / len(target)

    scored = sorted(pool, key=lambda q: -coverage(q))
    best = scored[0]
    best_cover = coverage(best)
    meaning = 0.0
    if best_cover < MIN_COVERAGE and embed is not None:
        vectors = np.asarray(embed([bare] + [q.reading for q in pool]), dtype=np.float32)
        sims = vectors[1:] @ vectors[0]
        i = int(np.argmax(sims))
        meaning = float(sims[i])
        if meaning >= MIN_MEANING:
            best = pool[i]
    if best_cover < MIN_COVERAGE and meaning < MIN_MEANING:
        missing = sorted((own or claim_terms) - terms(best.reading))[:3]
        return Judgement(Support.UNSUPPORTED, reason="the evidence does not say " + ", ".join(missing))

    # 5. negation
    if has_negation(bare) != has_negation(best.text) and not has_negation(question):
        return Judgement(Support.UNSUPPORTED, reason="the evidence says the opposite (negation differs)")
    supporting = [best] + [q for q in pool if q is not best and q.source is best.source
                           and terms(q.reading) & (own or claim_terms)][:1]
    return Judgement(Support.SUPPORTED, supporting)
