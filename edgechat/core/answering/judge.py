"""One support judge: does the evidence say what a sentence of the answer says?

`judge(claim, quotes)` compares one sentence with all the chosen quotes, whichever it cites (the
sources of those that support it become its chips), by principles that hold for any document, stated in
docs/answers.md ("One judge") and measured in docs/answers-measurements.md: 1. it states
something; 2. its figures are in the evidence, each said of what the claim says it is of (a
table's cell by its row and column, a figure of a list by the thing listed with it) and of its
date; 3. its names are in the evidence, whole, and its quotations word for word; 4. a quote
covers its content and most of what it adds to the question; 5. negation and the way a
comparison goes agree; 6. a cause only where a quote gives one; 7. asked, the local model does
not say no (`confirm`). A support checker the user configured decides 4-7 instead.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.answering.evidence import Quote, question_parts
from edgechat.core.answering.words import (
    asks_yes_or_no,
    figure_spans,
    figures,
    has_negation,
    names,
    negated_terms,
    terms,
)
from edgechat.core.records import Evidence, Source, Support

if TYPE_CHECKING:
    from edgechat.core.llm.support_check import SupportChecker, SupportVerdict

log = logging.getLogger(__name__)

__all__ = ["Judgement", "Library", "judge"]

MIN_COVERAGE = 0.6  # share of the claim's own content words one quote (or two of one passage) must hold
MIN_MEANING = 0.72  # or the cosine of claim and quote, for a paraphrase
CHECKER_CHARS = 4000  # at most this much evidence is sent to a support checker with a claim
CONFIRM_AT = 0.5  # P(Yes) below which the model's answer to "does the evidence support it?" is no


@dataclass(frozen=True)
class Library:
    """What the passages read for a question write (with their file names and titles): its words
    and names however cased, its tokens as written ("wasi.start(instance)"), and its figures. Read
    once per question, for every sentence judged."""

    words: frozenset[str]
    figures: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Library:
        lower = text.lower()
        tokens = {t.strip(_TOKEN_EDGES) for t in lower.split()}
        return cls(frozenset(names(text) | tokens | set(re.findall(r"\w+", lower))), frozenset(figures(text)))

    @classmethod
    def read(cls, passages: Sequence[Source], naming: Sequence[str] = ()) -> Library:
        """What `passages` write (file names, titles), with the words that named their documents."""
        return cls.of("\n".join([*(f"{p.path}\n{p.title}\n{p.content}" for p in passages), " ".join(naming)]))


_TOKEN_EDGES = ".,;:!?\"'`\u201c\u201d\u2018\u2019"  # around a token as written: punctuation and quotes


@dataclass
class Judgement:
    support: Support
    quotes: list[Quote] = field(default_factory=list)  # the quotes that support it, best first
    reason: str = ""

    def evidence(self) -> list[Evidence]:
        return [Evidence(q.source.ordinal, q.start, q.end) for q in self.quotes]


# Where a claim says it comes from ("According to the manual, ...", "... states that ...", "...,
# according to its report."): that names a document, not what the document says. A name has no
# verb: "..., according to its report was 13.0 years" goes on to say something.
_ATTRIBUTION_RES = (
    re.compile(r"^(?:according to|based on|as stated in|per)\b[^,]{1,160},\s*", re.IGNORECASE),
    re.compile(r"^[^,.;:]{1,120}?\b(?:states|says|notes|reports|mentions|explains|writes)\s+that\s+", re.IGNORECASE),
    re.compile(r",?\s*according to (?:(?!\b(?:is|are|was|were)\b)[^,;:]){1,160}?(?=[.!?]?$)", re.IGNORECASE),
)


def _unattributed(text: str) -> str:
    """`text` without the words that say where it comes from, when something is left."""
    for pattern in _ATTRIBUTION_RES:
        rest = pattern.sub("", text, count=1).strip()
        if terms(rest):
            text = rest
    return text


# Cut at every stop before a capital, initials too: citations.sentence_spans keeps "use R. When"
# whole, and a quote already holds what that splitter left together.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\d\"\u201c(])")

_ENDED_RE = re.compile(r"[.!?][\"'\u201d)\]]*\s*$")  # text that ends a sentence
_PRONOUN_START_RE = re.compile(r"^(?:it|its|they|their|this|these|that|those|he|she|his|her|there)\b", re.IGNORECASE)


_QUOTATION_RE = re.compile(r"(?:^|(?<=[\s(]))[\"\u201c]([^\"\u201d]+)[\"\u201d]")


def _letters(text: str) -> str:
    """`text`'s letters and digits, lower case: what a quotation of it keeps."""
    return re.sub(r"[\W_]+", "", text.lower())


def _quoted(quotation: str, text: str) -> bool:
    """Does `text` write `quotation`, spacing, case and punctuation aside, with at most one word of
    it changed, left out or added (a copy's slip: "a program" for "the program")?"""
    if _letters(quotation) in _letters(text):
        return True
    said = re.findall(r"[^\W_]+", quotation.lower())
    words = " ".join(re.findall(r"[^\W_]+", text.lower()))
    for i in range(len(said) + 1):
        before, after = said[:i], said[i:]
        for middle, rest in ((r"\S+", after[1:]), (r"\S+", after), ("", after[1:])):  # changed, left out, added
            pattern = r"\s".join([*map(re.escape, before), *([middle] if middle else []), *map(re.escape, rest)])
            if re.search(rf"(?<!\S){pattern}(?!\S)", words):
                return True
    return False


def _whole_sentence(q: Quote) -> str:
    """The sentence of its passage that `q` is part of (a quote may be one line of it), with the
    sentence before when it begins with what that one names ("It lies 3200 feet ...")."""
    content = q.source.content
    prefix = content[max(0, q.start - 400):q.start]
    before = _SENTENCE_END_RE.split(prefix.strip()) if prefix.strip() else []
    sentence = ""
    if before and not _ENDED_RE.search(prefix):  # the quote begins inside a sentence
        sentence, before = before[-1] + " ", before[:-1]
    sentence += content[q.start:q.end]
    if not _ENDED_RE.search(sentence):  # and ends inside one
        sentence += _SENTENCE_END_RE.split(content[q.end:q.end + 400])[0]
    if _PRONOUN_START_RE.match(sentence.strip()) and before:
        sentence = f"{before[-1]} {sentence}"
    return sentence


def _said_of_question(q: Quote, asked: set[str]) -> bool:
    """Whether the whole sentence of `q` writes half of `asked` (the words a claim took from the
    question) that its passage uses at all: a word the passage never writes is the question's
    phrasing ("what does it cover"), not what the figure is of."""
    used = asked & terms(q.source.content)
    return len(terms(_whole_sentence(q)) & used) * 2 >= len(used)


def _sentence_saying(text: str, target: set[str]) -> str:
    """The sentence of a quote that shares most words with `target` (a quote may hold two)."""
    return max(_SENTENCE_END_RE.split(text), key=lambda s: len(terms(s) & target))


# Prefixes that negate the word they begin, and the shortest stem left after one for the pair to
# count ("invalid"/"valid", "asynchronous"/"synchronous"; not "input"/"put", "display"/"play").
_NEGATING_PREFIXES = (("non", 5), ("dis", 5), ("un", 5), ("in", 5), ("im", 5), ("ir", 5), ("il", 5), ("a", 6))
# The words that say which way a comparison or a change goes, up and down.
_UP = frozenset(terms("higher greater larger bigger increase rise rising rose risen grew grow longer faster"))
_DOWN = frozenset(terms("lower less fewer smaller decrease fall fell fallen decline shrank reduced shorter slower"))


def _opposed(claim_terms: set[str], sentence: str, directions: bool) -> tuple[str, str] | None:
    """A word of the claim and the word of `sentence` that says its opposite, else None: the two
    differ only by a negating prefix, each saying its own and not the other's ("asynchron",
    "synchron"); or, with `directions` (no negation governs a word of direction: "not higher" is
    not "higher"), the claim says one way a thing goes ("higher") and the sentence only the other
    ("lower")."""
    said = terms(sentence)
    for mine, theirs in ((claim_terms, said), (said, claim_terms)):
        for word in mine - theirs:
            for prefix, shortest in _NEGATING_PREFIXES:
                rest = word[len(prefix):]
                if word.startswith(prefix) and len(rest) >= shortest and rest in theirs and rest not in mine:
                    return (word, rest) if mine is claim_terms else (rest, word)
    for way, other in ((_UP, _DOWN), (_DOWN, _UP)) if directions else ():
        if claim_terms & way and not claim_terms & other and said & other and not said & way:
            return min(claim_terms & way), min(said & other)
    return None


# A footnote's mark written after a row's label, before its cells ("Garden tools (2) 4,591").
_FOOTNOTE_MARK_RE = re.compile(r"[^\W\d_]\s*\(\d{1,2}\)\s+[-\u2212$\u20ac\u00a3(]?\s*\d")
_CELL_RE = re.compile(r"\(?[-\u2212$\u20ac\u00a3]?\d[\d,]*(?:\.\d+)?\)?%?")
_LABEL_RE = re.compile(r"(?<![\w.,])\d[\d.]*(?![\w,])(?!\s*,)")

_SCALE_RE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion)s?\b", re.IGNORECASE)
_SCALE_OF_TABLE_RE = re.compile(r"\bin (thousand|million|billion|trillion)s\b", re.IGNORECASE)


def _scales(text: str) -> dict[str, str]:
    """Figure -> the scale word written after it ("2.5 billion")."""
    return {m.group(1).replace(",", ""): m.group(2).lower() for m in _SCALE_RE.finditer(text)}


def _scale_agrees(claim: str, figure: str, holders: Sequence[Quote]) -> bool:
    """A scale the claim writes after a figure ("4,774 billion") is the one the evidence gives it:
    written after the figure there, or said by its table ("(in millions)"). A claim that writes none
    does not contradict."""
    wanted = _scales(claim).get(figure)
    if wanted is None:
        return True
    for q in holders:
        table = _SCALE_OF_TABLE_RE.search(f"{q.headings} {q.source.content[:q.start]}")
        if (_scales(q.text).get(figure) or (table.group(1).lower() if table else wanted)) == wanted:
            return True
    return False


def _cells(row: str) -> list[str]:
    """The figures of a row's cells, right to left until its label (in reading order)."""
    cells = []
    for token in reversed(row.replace("|", " ").split()):
        if _CELL_RE.fullmatch(token):
            cells.append(figures(token)[0] if figures(token) else token)
        elif token not in {"$", "\u20ac", "\u00a3", "%", "\u2014", "\u2013", "-"}:
            break
    return cells[::-1]


def _row_label_terms(quote: Quote) -> set[str]:
    return terms(quote.text) - set(figures(quote.text))


# Where a sentence moves from one thing to the next: a comma or semicolon (not inside a figure), or a
# word that sets two side by side ("and", "while", "against", "compared with" ...).
_NEXT_THING_RE = re.compile(r"[,;](?!\d)|\b(?:and|but|while|whereas|against|versus|vs\.|compared (?:with|to))\b", re.I)


def _said_of(claim: str, figure: str, skip: frozenset[str]) -> set[str]:
    """The claim's words about one of its figures: those between the figures either side of it. A
    sentence that gives two things two figures ("a length of 12 km and a depth of 40 m", "$7,020
    for taxes and $2,590 for interest") says each of them in its own clause: where the words
    between two figures break ("and", a comma), those before the break are the first figure's and
    those after it the second's. Figures in `skip` (the question's own, such as its dates) do not
    divide the sentence. Empty when no other figure does."""
    spans = [(f, b, e) for f, b, e in figure_spans(claim) if f not in skip]
    at = next((i for i, (f, _, _) in enumerate(spans) if f == figure), None)
    if at is None or len(spans) < 2:
        return set()
    before = claim[spans[at - 1][2] if at else 0:spans[at][1]]
    after = claim[spans[at][2]:spans[at + 1][1] if at + 1 < len(spans) else len(claim)]
    if at:  # the words after the last break before it
        before = _NEXT_THING_RE.split(before)[-1]
    if at + 1 < len(spans):  # the words before the first break after it
        after = _NEXT_THING_RE.split(after)[0]
    return terms(f"{before} {after}")


_UNIT_RE = re.compile(r"\s?(%|[^\W\d_]+)")

# A month written before a day or year: it is part of that date, not what the date is of.
_MONTH = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_MONTH_BEFORE_RE = re.compile(rf"\b{_MONTH}(?=\s+\d)", re.IGNORECASE)
# A whole date, month first or day first ("April 1, 2023", "1 April 2023"), and the years that
# share its day ("June 30, 2022 and 2023").
_DATE_RE = re.compile(rf"\b(?:{_MONTH}\s+(\d{{1,2}}),?|(\d{{1,2}})\s+{_MONTH},?)"
                      r"\s+(\d{4}(?:(?:,|,? and|,? or)\s+\d{4})*)\b", re.IGNORECASE)


def _dates(text: str) -> set[tuple[str, int, str]]:
    """The whole dates `text` writes, as (month, day, year)."""
    return {((m[1] or m[4])[:3].lower(), int(m[2] or m[3]), year)
            for m in _DATE_RE.finditer(text) for year in re.findall(r"\d{4}", m[5])}


def _unit(text: str, end: int) -> str:
    """What the figure ending at `end` counts: the word or sign right after it ("5 days", "3%")."""
    m = _UNIT_RE.match(text, end)
    word = m.group(1).lower() if m else ""
    return word if word == "%" or terms(word) else ""  # "5 days", not "2023 was"


def _cell_fits(quote: Quote, rows: Sequence[Quote], claim: str, claim_terms: set[str], figure: str,
               question: str) -> bool:
    """A figure taken from a table row fits the claim only if it is the cell whose headings the
    claim names: its row's label, when it has one, shares a word with `claim_terms` (what the claim
    says of that figure), and no other row of its table (`rows`: those read) says more of it; and
    when the table's column headings are labels of their own ("2022 2023", "v1 v2", and any words
    after the last: "2027 Thereafter Total"), one per cell counted from the right, and the claim
    names some of them, the figure is in a column so labelled (where it names several, the one its
    clause names: "$52,966 in 2023, against $50,855 in 2022"; where it names none and gives one cell
    of the row, the one `question` names)."""
    if not quote.row:
        return True
    label = _row_label_terms(quote)
    overlap = len(label & claim_terms)
    if overlap == 0 and (label or not (terms(quote.headings) - {figure}) & claim_terms):
        return False  # the row names something the claim does not (or, unlabelled, its table does)
    if any(len(_row_label_terms(r) & claim_terms) > overlap for r in rows if r.source is quote.source):
        return False
    cells = _cells(quote.text)
    labels = list(_LABEL_RE.finditer(quote.headings))
    columns = [m.group() for m in labels]
    if len(cells) == len(columns) + 1 and _FOOTNOTE_MARK_RE.search(quote.text):
        cells = cells[1:]  # "Garden tools (2) 4,591 4,895": the mark refers to a note, the cells follow it
    if labels and len(columns) != len(cells):  # the words after the last label head columns too
        columns = (columns + re.findall(r"[^\W\d_]+", quote.headings[labels[-1].end():]))[-len(cells):]
    return len(cells) < 2 or len(columns) != len(cells) or _in_named_column(cells, columns, claim, figure, question)


def _in_named_column(cells: Sequence[str], columns: Sequence[str], claim: str, figure: str, question: str) -> bool:
    """Whether `figure`, one of `cells` under `columns`, is in a column the claim names: where the
    clause that holds it names some, else the whole claim, else, when the claim does not give every
    cell, the question (one cell given is the one asked for). Naming all of them, or none, picks none."""
    def named_in(text: str) -> set[str]:
        return {c for c in columns
                if re.search(rf"(?<![\d.]){re.escape(c)}(?!\d)" if c[0].isdigit() else rf"\b{c}\b", text, re.I)}

    texts = [c for c in _NEXT_THING_RE.split(claim) if figure in figures(c)] + [claim]
    if not set(cells) <= set(figures(claim)):
        texts.append(question)
    named = next((n for t in texts if (n := named_in(t))), set())
    return figure not in cells or not named or named == set(columns) or any(
        columns[i] in named for i, cell in enumerate(cells) if cell == figure)


# Figures listed side by side, then as many dates or years that they are of, pair up in order as a
# row's cells with its columns: "$(15.6) billion and $(11.8) billion for Q3 2022 and Q3 2023".
_LIST_GAP_RE = re.compile(r"[^\w,]*(?:[^\W\d_]+\b[^\w,]*)?(?:,\s*(?:(?:and|or)\s+)?|\b(?:and|or)\s+)\W*", re.I)
_LABEL_GAP_RE = re.compile(r"\W*(?:,\s*(?:(?:and|or)\s+)?|\s(?:and|or)\s+)(?:\w+,?\s+){0,2}", re.I)  # "2022 and Q3 2023"
_OF_RE = re.compile(r"[^\w,]*(?:[^\W\d_]+[^\w,]*)?\b(?:for|in|during|at|on|of|from|over)\b", re.I)  # "billion for"
_DAY_RE = re.compile(r"\d{1,2},\s*\d{4}\b")  # "December 31, 2022": the year names the date


def _runs(sentence: str, spans: list[tuple[str, int, int]], gap: re.Pattern[str]) -> list[list[tuple[str, int, int]]]:
    """The figures of `spans` in runs whose neighbours `gap` joins ("$4.2 and $4.6", "2022 and Q3
    2023"), written alike (a currency sign before both or neither, a percent sign after)."""
    def sign(f: tuple[str, int, int]) -> tuple[bool, bool]:
        return sentence[max(0, f[1] - 3):f[1]].rstrip("( ").endswith(("$", "\u20ac", "\u00a3")), sentence[f[2]:f[2] + 1] == "%"
    runs = [spans[:1]]
    for f in spans[1:]:
        if gap.fullmatch(sentence, runs[-1][-1][2], f[1]) and sign(runs[-1][-1]) == sign(f):
            runs[-1].append(f)
        else:
            runs.append([f])
    return runs if spans else []


def _listed(sentence: str) -> list[tuple[list[str], list[str]]]:
    """Each list of figures in `sentence` followed by as many dates or years it is of, as (cells,
    columns)."""
    spans = [f for f in figure_spans(sentence) if not (len(f[0]) <= 2 and _DAY_RE.match(sentence, f[1]))]
    labels = [r for r in _runs(sentence, spans, _LABEL_GAP_RE) if len(r) > 1]
    found, used = [], 0  # where the dates listed last end: their figures begin no list
    for run in _runs(sentence, spans, _LIST_GAP_RE):
        run = [f for f in run if f[1] >= used]
        after = spans[spans.index(run[-1]) + 1] if run and run[-1] != spans[-1] else None  # the next figure
        columns = next((r[r.index(after):][:len(run)] for r in labels if after in r), [])
        if len(run) == len(columns) > 1 and _OF_RE.match(sentence, run[-1][2]):
            used = columns[-1][2]
            found.append(([f for f, _, _ in run], [f for f, _, _ in columns]))
    return found


def _pair_fits(quote: Quote, claim: str, figure: str, question: str) -> bool:
    """A figure its sentence lists beside as many dates or years (as cells under columns) is in the
    column the claim names (`_in_named_column`; a claim that lists them too, by its own list)."""
    if quote.row:
        return True
    own = {cell: column for cells, columns in _listed(claim) for cell, column in zip(cells, columns)}
    return all(_in_named_column(cells, columns, own.get(figure, claim), figure, question)
               for cells, columns in _listed(_whole_sentence(quote)))


# A reply to a question asked yes or no: "Yes," or "No," before what it claims.
_REPLY_RE = re.compile(r"^(?:yes|no)\s*[,.!;:]\s+(?=\S)", re.IGNORECASE)  # "Yes [1], ..." too

# A claim that gives a reason, and the words in which evidence gives one (cause, consequence, purpose).
_GIVES_CAUSE_RE = re.compile(
    r"\b(?:because|due to|owing to|as a result|caused by|this is why|the reason|therefore|thus|hence)\b",
    re.IGNORECASE)
_CAUSE_WORDS_RE = re.compile(
    r"\b(?:because|since|due|owing|result(?:s|ed|ing)?|caus(?:e|es|ed|ing)|consequen\w*|therefore|thus"
    r"|hence|so|in order|lead(?:s|ing)?|led|driven|reason\w*|why|thanks|mean(?:s|ing)?|otherwise"
    r"|to (?:avoid|prevent|ensure|allow|make|keep|let|stop|reduce|protect)"
    r"|, as (?:the|a|an|it|its|they|their|this|these|there|we|no)"  # ", as the system did not ..."
    r"|, for (?:it|they|he|she|we|there))\b",  # ", for it requires ..."
    re.IGNORECASE)


def _next_to(q: Quote, pool: Sequence[Quote]) -> list[Quote]:
    """The quotes of `q`'s passage right before or after it (a sentence may join two)."""
    return [o for o in pool if o.source is q.source and o is not q
            and (o.start == q.end or o.end == q.start or 0 < o.start - q.end <= 2 or 0 < q.start - o.end <= 2)]


def judge(claim: str, quotes: Sequence[Quote], question: str = "", embed: Callable[[list[str]], Any] | None = None,
          naming: Sequence[str] = (), checker: SupportChecker | None = None, read: Library | None = None,
          confirm: Callable[[str, str], float] | None = None) -> Judgement:
    """The verdict on one sentence of an answer (see the module docstring). `naming`: the
    question's words that name its documents (edgechat.core.search.subject); `checker`: a
    support checker that decides instead of the coverage and negation principles; `read`: what
    the library writes of the question (`Answerer.library_read`; None: not known);
    `confirm(evidence, claim)`: the local model's P(Yes) that the evidence supports the claim,
    asked once the principles pass."""
    bare = _unattributed(" ".join(MARKER_RE.sub(" ", claim).split()))
    reply = _REPLY_RE.match(bare) if asks_yes_or_no(question) else None
    bare = bare[reply.end():] if reply else bare
    question_terms = terms(question)
    claim_terms = terms(bare)
    own = claim_terms if reply else claim_terms - question_terms  # a reply's polarity is its claim
    if bare.rstrip().endswith(":") or not own:  # an introduction, or the question said back (figures are terms)
        return Judgement(Support.NO_CLAIM)
    if not quotes:
        return Judgement(Support.UNSUPPORTED, reason="there is no evidence to support it")
    named = terms(" ".join(naming))  # say which document, not what it says

    # What the question writes is given where the library writes it too (`read`): a name or figure
    # it does not hold is the question's premise, which the evidence cannot support.
    written = Library.of(question)  # its words (its names, however cased) and figures
    given = written if read is None else Library(written.words & read.words, written.figures & read.figures)

    # 2. figures, each in a quote about the same thing
    rows = [q for q in quotes if q.row and figures(q.text)]  # a row without a figure is the table's headings
    dated = _dates(bare) | _dates(question)
    for f in figures(bare):
        if f in given.figures:
            continue  # the question's own figure ("the top-20 accuracy", "its report for 2023") is given
        # A row's headings hold a figure they write in digits (a column's label, "2023"), not a
        # word that reads as one ("Two seasons of results" names a period, not a count).
        holders = [q for q in quotes if f in figures(q.text) or any(f == g for g, _, _ in figure_spans(q.headings))]
        if not holders:
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is not in the evidence")
        if not _scale_agrees(bare, f, holders):
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} has another scale in the evidence")
        # A figure is of the date its sentence gives it: where the claim or the question dates it, a
        # sentence that gives only other dates speaks of another time (a table's columns: below).
        if dated and not any(q.row or not (d := _dates(_whole_sentence(q))) or d & dated for q in holders):
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is of another date in the evidence")
        # What the claim says of this figure: the words next to it when they name a row (else,
        # a column label such as a year beside it, the whole claim).
        about_figure = _said_of(bare, f, written.figures)
        if not any(about_figure & _row_label_terms(r) for r in rows):
            about_figure = claim_terms - {f}
        if not any(_cell_fits(q, rows, bare, about_figure, f, question) for q in holders):
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is not in the row and column the claim names")
        if not any(_pair_fits(q, bare, f, question) for q in holders):
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is listed with another date in the evidence")
        # In prose, the sentence that holds the figure shares half of the claim's other content
        # words, and its whole sentence half of those the claim took from the question ("bank
        # records ... two years" is not said by "case files ... two years"). A claim that is only a
        # figure says it of what the question, or one of its parts, asks (docs/answers.md, 2).
        counted = terms(" ".join(_unit(bare, end) for _, _, end in figure_spans(bare))  # "hours"
                        + " " + " ".join(_MONTH_BEFORE_RE.findall(bare)))  # a date's month is the date
        about = claim_terms - set(figures(bare)) - named - counted
        candidates = [about]
        if not about:  # only figures: of the whole question, or of one of the things it asks
            used = set().union(*(terms(q.reading) for q in quotes))
            candidates = []
            for asked in [question, *(p for p in question_parts(question) if p != question)]:
                of = terms(asked) - written.figures - named - counted
                candidates.append((of & used) or of or claim_terms)

        def held_as(of: set[str]) -> bool:
            return any(q.row or not terms(q.reading) - set(figures(q.reading))  # a row, or column headings
                       or (len(terms(q.reading) & of) * 2 >= len(of) and _said_of_question(q, of & question_terms))
                       for q in holders)

        if not any(held_as(of) for of in candidates):
            return Judgement(Support.UNSUPPORTED, reason=f"the figure {f} is said of something else in the evidence")

    # 3. names, and quotations: three words or more in quotation marks are what the passages write (or
    # what the question quotes), spacing, case, punctuation and a slip of one word aside
    quotations = [quoted for quoted in _QUOTATION_RE.findall(bare) if len(quoted.split()) >= 3]
    passages = " ".join([*_QUOTATION_RE.findall(question), *(f"{q.source.title} {q.headings} {q.source.content}"
                                                             for q in quotes)]) if quotations else ""
    for quoted in quotations:
        if not _quoted(quoted, passages):
            return Judgement(Support.UNSUPPORTED, reason=f"the evidence does not write \u201c{quoted}\u201d")
    evidence_text = " ".join(f"{q.source.title} {q.headings} {q.text}" for q in quotes).lower()
    evidence_terms = terms(evidence_text)
    flat_evidence = "".join(evidence_text.split())
    for name in names(bare) - given.words:
        # A name is written whole: not by a longer one that holds it ("cluster_sched_policy"), nor
        # by its parts spread over the evidence; code is the same spacing aside; "f()" by "f(x)".
        called = name.endswith("()")
        whole = re.search(rf"(?<!\w){re.escape(name[:-1] if called else name)}" + ("" if called else r"(?!\w)"),
                          evidence_text) or (
            not re.fullmatch(r"[\w-]+", name) and "".join(name.split()) in flat_evidence)
        if not whole and not (len(terms(name)) == 1 and terms(name) <= evidence_terms):
            return Judgement(Support.UNSUPPORTED, reason=f"\u201c{name}\u201d is not in the evidence")

    # 4. coverage by the best quote (with the quote next to it: a sentence may join two).
    # Everything the claim says counts, the words it took from the question included (a claim that
    # puts the question's subject on another thing's figure is wrong); only the words that name the
    # document are left out, since quotes rarely repeat them.
    target = (claim_terms - named) or claim_terms

    def said_near(q: Quote) -> set[str]:  # what `q` says, with its source's title and its neighbours
        return terms(q.reading).union(terms(q.source.title), *(terms(o.reading) for o in _next_to(q, quotes)))

    def coverage(q: Quote) -> float:
        return len(target & said_near(q)) / len(target)

    # the quote that covers it best with its neighbour; of those, the one that says most alone
    scored = sorted(quotes, key=lambda q: (-coverage(q), -len(target & terms(q.reading))))
    best = scored[0]
    if checker is not None:
        verdict = _ask_checker(checker, bare, scored)
        if verdict is not None:
            if not verdict.supported:
                return Judgement(Support.UNSUPPORTED, reason=f"the support checker {checker.name} found it "
                                                             f"unsupported (p={verdict.probability:.2f})")
            return Judgement(Support.SUPPORTED, _with_neighbour(best, quotes, target))
    best_cover = coverage(best)
    meaning = 0.0
    if best_cover < MIN_COVERAGE and embed is not None:
        vectors = np.asarray(embed([bare] + [q.reading for q in quotes]), dtype=np.float32)
        sims = vectors[1:] @ vectors[0]
        i = int(np.argmax(sims))
        meaning = float(sims[i])
        if meaning >= MIN_MEANING:
            best = quotes[i]
    if best_cover < MIN_COVERAGE and meaning < MIN_MEANING:
        unsaid = sorted(target - terms(best.reading))[:3]
        return Judgement(Support.UNSUPPORTED, reason="the evidence does not say " + ", ".join(unsaid))
    # What it adds to the question is what the evidence must say: a sentence that says the question
    # back and adds a basis of its own passes the count above on the question's words alone.
    added = own - named - set(figures(bare))
    near = said_near(best)
    if len(added) >= 2 and len(added & near) * 2 < len(added):
        return Judgement(Support.UNSUPPORTED,
                         reason="the evidence does not say what it adds: " + ", ".join(sorted(added - near)[:3]))

    # 5. negation and direction: the quotes that say most of it must say it the same way
    overlap = {id(q): len(target & terms(q.reading)) for q in quotes}
    closest = max(overlap.values())
    said_so = [q for q in quotes if overlap[id(q)] == closest and closest > 0]
    if not has_negation(question) and (
            (has_negation(bare) and not any(has_negation(q.text) for q in quotes if overlap[id(q)] >= 2))
            or (not has_negation(bare) and any(negated_terms(_sentence_saying(q.text, target)) & claim_terms
                                               for q in said_so))):
        return Judgement(Support.UNSUPPORTED, reason="the evidence says the opposite (negation differs)")
    for q in said_so:
        sentence = _sentence_saying(q.text, target)
        directions = not ((negated_terms(bare) | negated_terms(sentence)) & (_UP | _DOWN))  # "not higher" goes no way
        opposed = _opposed(claim_terms, sentence, directions)
        if opposed:
            return Judgement(Support.UNSUPPORTED,
                             reason=f"the evidence says the opposite ({opposed[1]}, not {opposed[0]})")

    # 6. a cause, given as one by the quotes that say it
    supporting = _with_neighbour(best, quotes, target)
    if _GIVES_CAUSE_RE.search(bare) and not any(_CAUSE_WORDS_RE.search(q.text) for q in supporting):
        return Judgement(Support.UNSUPPORTED, reason="the evidence does not give this as a cause")

    # 7. the model, asked whether all the evidence supports the sentence, does not say no
    if confirm is not None:
        p = confirm("\n".join(q.reading for q in quotes), " ".join(MARKER_RE.sub(" ", claim).split()))
        if p < CONFIRM_AT:
            return Judgement(Support.UNSUPPORTED, reason=f"asked, the model says the evidence does not (P(yes) {p:.2f})")
    return Judgement(Support.SUPPORTED, supporting)


def _with_neighbour(best: Quote, pool: Sequence[Quote], target: set[str]) -> list[Quote]:
    """The supporting quotes: the best, and one of its passage that says the rest, if any."""
    rest = target - terms(best.reading)
    return [best] + [q for q in pool if q is not best and q.source is best.source and terms(q.reading) & rest][:1]


def _ask_checker(checker: SupportChecker, claim: str, quotes: Sequence[Quote]) -> SupportVerdict | None:
    """The checker's verdict on `claim` against the quotes (best first, as many as CHECKER_CHARS
    holds, at least one), read as a document: each source's title, then its quotes in their order.
    None when it fails."""
    sizes = itertools.accumulate(len(q.reading) + 1 for q in quotes)
    chosen = [q for q, size in zip(quotes, sizes) if size <= CHECKER_CHARS + 1] or list(quotes[:1])
    parts: list[str] = []
    for source in {id(q.source): q.source for q in chosen}.values():
        said = " ".join(q.reading for q in sorted(chosen, key=lambda q: q.start) if q.source is source)
        parts.append(f"{source.title}\n{said}" if source.title else said)
    try:
        return checker.check("\n\n".join(parts), re.sub(r"\s+([.,;:!?])", r"\1", claim).strip())
    except Exception as e:  # noqa: BLE001 - a checker that fails leaves the principles to decide
        log.warning("the support checker %s failed (%s): the answer check's principles decide", checker.name, e)
        return None
