"""A chat client with no model: it answers by quoting the best sentences of the sources.

It reads the question from the last (non-pinned) user message and the sources from
``options.sources`` only -- never from the rendered context text. It picks 2-4 sentences
from the top-ranked sources by lexical overlap with the question (IDF-weighted, with a bias
toward higher-ranked sources; given an embedder, blended with the sentence's embedding
similarity to the question), skips headers and other noise, and writes each sentence
followed by its source's marker: ``"Sentence one. [1] Sentence two. [2]"``.

Quotes are verbatim (see `quote_text`) except that whitespace runs (PDF line wraps) become
one space and any bracket markers inside the document's own text (``[12]`` reference
numbers) are dropped, so the answer's markers are only ever the ones this client wrote.
Sentence boundaries: paragraph breaks, heading lines and list items always end a sentence,
single line breaks never do, and "." after a common abbreviation or an initial does not.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.answering.columns import (
    column_headings,
    is_figure_row,
    row_label,
    total_of_a_named_part,
)
from edgechat.core.answering.wording import _names, report_of
from edgechat.core.indexing.context import LABEL_KEY, boilerplate_spans, named_cells
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, Role, Source, StopReason

__all__ = ["COLUMNS", "ExtractiveClient", "NO_MATCH_TEXT", "NO_TEXT_TEXT", "asked_rows", "asks_for_figure",
           "begins_cut", "column_line", "quote_text", "split_sentences", "table_caption"]

NO_MATCH_TEXT = "Nothing in your library matched this question, so I cannot answer it from your documents."
NO_TEXT_TEXT = "The passages that matched this question contain no readable sentences to quote."

MAX_SOURCES = 5  # only the top-ranked sources are quoted
MIN_SENTENCES = 2
MAX_SENTENCES = 4
RANK_DECAY = 0.2  # score multiplier 1 / (1 + RANK_DECAY * rank_index)
RELATIVE_CUTOFF = 0.45  # after the minimum, a sentence needs this fraction of the best score

_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves tell explain describe please give know say says said also may might must shall
    does doesn't don't isn't aren't wasn't weren't there's it's""".split()
)
_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

# A sentence ends at . ! ? … (plus closing quotes/brackets) followed by whitespace.
_END_RE = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]\u00bb]*(?=\s|$)")
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf al fig figs eq eqs no nos vol pp p ch sec dr mr mrs ms prof st jr sr"
    " inc ltd co corp approx ca resp dept univ".split()
)
_WORD_BEFORE_RE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_BLOCK_START_RE = re.compile(r"^\s*(?:#{1,6}\s|[-*\u2022\u25aa\u2013]\s|\d{1,3}[.)]\s|>\s)")
_LEADER_RE = re.compile(r"(?:\.\s?){4,}|_{4,}|-{4,}|={3,}|\|")


def _stem(word: str) -> str:
    """A very light stemmer: plural and common verb endings."""
    if word.endswith("'s"):
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    return word


def _terms(text: str) -> set[str]:
    return {
        _stem(w)
        for w in (m.group().lower() for m in _WORD_RE.finditer(text))
        if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())
    }


def _is_abbreviation(text: str, dot: int) -> bool:
    m = _WORD_BEFORE_RE.search(text, max(0, dot - 12), dot)
    if not m:
        return False
    word = m.group(1)
    return (len(word) == 1 and word.isupper()) or word.lower().rstrip(".") in _ABBREVIATIONS


_ENDS_SENTENCE_RE = re.compile(r"[.!?:;\u2026][\"'\u201d\u2019)\]\u00bb]*$")


def _is_header_line(line: str, previous: str | None, following: str | None) -> bool:
    """A line that stands on its own: a markdown heading or table row, or a title or
    table-of-contents entry -- a short line with no sentence ending that does not continue a
    wrapped sentence (the line before ended a sentence, or there is none) and is not
    continued by a lower-case line."""
    s = line.strip()
    if s.startswith("#") or (len(s) > 2 and s.startswith("|") and s.endswith("|")):
        return True  # a markdown heading or table row
    if len(s.split()) > 8 or _ENDS_SENTENCE_RE.search(s):
        return False
    if previous is not None and not _ENDS_SENTENCE_RE.search(previous.strip()):
        return False
    nxt = (following or "").lstrip()
    return not (nxt[:1].islower())


def _blocks(text: str) -> list[tuple[int, int]]:
    """Spans of paragraphs, with heading lines, list items and table rows of figures split off
    on their own. Single line breaks inside a paragraph (PDF wraps) do not end a block."""
    lines = text.splitlines(keepends=True)
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    pos = 0
    previous: str | None = None  # the previous non-blank line of the current block
    for i, line in enumerate(lines):
        line_start, pos = pos, pos + len(line)
        if not line.strip():
            if start is not None:
                blocks.append((start, line_start))
                start = None
            previous = None
            continue
        following = lines[i + 1] if i + 1 < len(lines) else None
        if _is_header_line(line, previous, following) or is_figure_row(line):
            if start is not None:
                blocks.append((start, line_start))
                start = None
            blocks.append((line_start, pos))
            previous = None
            continue
        if _BLOCK_START_RE.match(line) and start is not None:
            blocks.append((start, line_start))
            start = None
        if start is None:
            start = line_start
        previous = line
    if start is not None:
        blocks.append((start, len(text)))
    return blocks


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of `text` (``text[s:e]`` is the sentence, surrounding whitespace
    excluded). Paragraph breaks, headings and list items always end a sentence; single line
    breaks do not; "." after a common abbreviation or an initial does not."""
    spans: list[tuple[int, int]] = []
    for b_start, b_end in _blocks(text):
        cut = b_start
        for m in _END_RE.finditer(text, b_start, b_end):
            if m.group()[0] == "." and len(m.group().rstrip("\"'\u201d\u2019)]\u00bb")) == 1:
                if _is_abbreviation(text, m.start()):
                    continue
            spans.append((cut, m.end()))
            cut = m.end()
        spans.append((cut, b_end))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


_DOC_MARKER_RE = re.compile(r"\s*" + MARKER_RE.pattern)


def quote_text(raw: str) -> str:
    """How a piece of source text is quoted: the document's own bracket markers removed
    (with the space before them) and whitespace runs collapsed to one space."""
    def drop(m: re.Match[str]) -> str:
        following = m.string[m.end() : m.end() + 1]
        return "" if following and following in ".,;:!?)" else " "

    # Until none is left: removing "[7]" from "[1, [7] 2]" leaves a marker "[1, 2]" behind.
    text, previous = raw, None
    while text != previous:
        previous, text = text, _DOC_MARKER_RE.sub(drop, text)
    return " ".join(text.split())


_TABLE_RULE_RE = re.compile(r"^:?-{2,}:?$")


def _is_table_row_noise(row: str) -> bool:
    """A markdown table row is worth quoting ("| New chat | Ctrl+N |") unless it is a rule
    row or has fewer than two cells with text."""
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if all(_TABLE_RULE_RE.match(c) or not c for c in cells):
        return True
    return sum(any(ch.isalnum() for ch in c) for c in cells) < 2


def _is_noise(sentence: str) -> bool:
    stripped = sentence.strip()
    if len(stripped) > 2 and stripped.startswith("|") and stripped.endswith("|"):
        return _is_table_row_noise(stripped)
    if " | " in stripped and named_cells(stripped):
        return False  # a spreadsheet or slide table row, each cell with its column's name
    if is_figure_row(stripped):
        return False  # a row of a table of figures: quoted whole, with its table's caption
    return _is_prose_noise(stripped)


def _is_prose_noise(sentence: str) -> bool:
    words = sentence.split()
    if len(words) < 4:
        return True
    letters = sum(ch.isalpha() for ch in sentence)
    if letters < 0.5 * len(sentence.replace(" ", "")):
        return True  # numbers, table rows, symbols
    if not any(ch.islower() for ch in sentence):
        return True  # ALL CAPS headings
    if _LEADER_RE.search(sentence):
        return True  # table of contents leaders, rules, table pipes
    if sentence.lstrip().startswith("#"):
        return True
    if not re.search(r"[.!?\u2026][\"'\u201d\u2019)\]\u00bb]*$", sentence) and len(words) < 8:
        return True  # a heading that slipped through
    return False


@dataclass
class _Candidate:
    source: Source
    rank: int
    position: int
    text: str
    terms: set[str]
    noise: bool
    score: float = 0.0
    boilerplate: bool = False  # on a contents/index line: never quoted
    caption: str = ""  # a table row's: the sentence that introduces its table


_CUT_STARTS = frozenset("abcdefghijklmnopqrstuvwxyz,.;:)")


def begins_cut(source: Source) -> bool:
    """Does the passage begin in the middle of a sentence (or of a table row: "net sales $ 117,154",
    what is left of "Total net sales")? Its first sentence has lost its start."""
    content = source.content if isinstance(source.content, str) else ""
    return source.start > 0 and content.lstrip()[:1] in _CUT_STARTS


def _candidates(sources: Sequence[Source]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for rank, source in enumerate(sources):
        content = source.content if isinstance(source.content, str) else ""
        skip = boilerplate_spans(content)
        cut = begins_cut(source)
        for position, (s, e) in enumerate(split_sentences(content)):
            text = quote_text(content[s:e])
            if not text:
                continue
            junk = any(a < e and s < b for a, b in skip)
            noise = junk or _is_noise(text) or (cut and position == 0 and is_figure_row(text))  # a row without its label's start
            out.append(_Candidate(source, rank, position, text, _terms(text), noise, boilerplate=junk))
    for c in out:
        if not c.noise and is_figure_row(c.text) and _running_line(c.text, c.source):
            c.noise = True
    for c in out:
        # A row is about what its table's caption says ("Net sales ... (in millions):") as well
        # as its own label ("iPhone").
        caption = _caption(out, c) if not c.noise and is_figure_row(c.text) else None
        if caption is not None:
            c.terms |= caption.terms
            c.caption = caption.text
    return out


def _select(question: str, sources: Sequence[Source], embed: Callable[[list[str]], Any] | None = None,
            rows: Sequence[tuple[Source, str, str]] | None = None) -> list[_Candidate]:
    """The sentences to quote, best first by shared words and meaning; the table rows asked for
    (`rows`, else found among `sources`) come first."""
    cands = _candidates(sources)
    clean = [c for c in cands if not c.noise] or [c for c in cands if not c.boilerplate]
    if not clean:
        return []
    query = _terms(question)
    n = len(clean)
    df: dict[str, int] = {}
    for c in clean:
        for t in c.terms & query:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + n / (1 + df.get(t, 0))) for t in query}
    total = sum(idf[t] for t in query if t in df) or 1.0
    for c in clean:
        overlap = sum(idf[t] for t in c.terms & query)
        length = len(c.text.split())
        length_factor = 0.75 if length < 6 else (0.85 if length > 60 else 1.0)
        c.score = (overlap / total) * length_factor / (1 + RANK_DECAY * c.rank)
    if embed is not None and len(clean) > 1:
        # Meaning as well as shared words: a sentence that answers with other words than the
        # question's still scores. Cosine similarity of normalised sentence embeddings.
        vecs = embed([question] + [f"{c.caption} {c.text}".strip() for c in clean])
        for c, v in zip(clean, vecs[1:]):
            sim = max(0.0, float(v @ vecs[0]))
            c.score = 0.5 * c.score + sim / (1 + RANK_DECAY * c.rank)

    ordered = sorted(clean, key=lambda c: (-c.score, c.rank, c.position))
    best = ordered[0].score
    chosen: list[_Candidate] = []
    seen: set[str] = set()

    def take(c: _Candidate) -> None:
        """Quote `c`, and a table row with the caption that says what its figures are."""
        for q in (_caption(cands, c) if c.caption else None, c):
            if q is not None and q.text.lower() not in seen and len(chosen) < MAX_SENTENCES:
                seen.add(q.text.lower())
                chosen.append(q)

    if rows is None:
        asked = _rows_asked_for(question, clean) if asks_for_figure(question) else []
    else:
        asked = [c for source, text, _ in rows for c in clean if c.source is source and c.text == text][:len(rows)]
    for row in asked:
        take(row)
    for c in ordered:
        if len(chosen) >= MAX_SENTENCES or c.score <= 0:
            break
        if len(chosen) >= MIN_SENTENCES and c.score < RELATIVE_CUTOFF * best:
            break
        take(c)
    if len(chosen) < MIN_SENTENCES:
        # Too little overlap: fall back on the opening sentences of the top sources.
        for c in sorted(clean, key=lambda c: (c.position, c.rank)):
            if len(chosen) >= MIN_SENTENCES:
                break
            take(c)
    # Read in source rank order, and in document order within a source.
    return sorted(chosen, key=lambda c: (c.rank, c.position))


# Words that ask for an amount: a question with one of them is answered by a figure, and a row
# of figures whose label names what it asks about is the answer a reader looks for first.
_AMOUNT_RE = re.compile(
    r"\b(?:how (?:much|many)|amounts?|totals?|numbers? of|percent(?:age)?s?|proportion|share of|revenues?"
    r"|sales|income|margins?|expenses?|expenditures?|costs?|spen[dt]|spending|profits?|loss(?:es)?|cash"
    r"|rates?|prices?|values?|debts?|earnings|assets|liabilities|dividends?|taxe?s?|budgets?|balances?"
    r"|salar(?:y|ies)|inventor(?:y|ies)|headcount|employees)\b", re.IGNORECASE)


def asks_for_figure(question: str) -> bool:
    """Does `question` ask for an amount ("how much", "revenue", "percentage" ...)?"""
    return bool(_AMOUNT_RE.search(question))


# What a question calls an amount and what a table's row calls it: a filing's "revenue" is its
# "Total net sales" row, its "earnings" the "Net income" row. Stems, as `_terms` gives them.
_ROW_NAMES = {"revenue": {"net", "sale"}, "earn": {"net", "income"}, "expenditure": {"expense"},
              "operational": {"operat"}}
MAX_ASKED_ROWS = 3
# Words that make a row another amount than the one its other words name: "Free cash flow" is not
# the cash flow from operations, "Deferred revenue" not revenue, "Total current assets" not total
# assets. A row with one the question does not say is not what it asks for.
_QUALIFIERS = frozenset(_terms("free deferred unearned accrued adjusted other unrealized restricted prepaid current "
                                "noncurrent"))
# What kind of amount a row is: a row that names one the question does not ("Loss from operations"
# for cash flows from operations) is not what it asks for.
_AMOUNT_NOUNS = frozenset(_terms("revenue sales income loss expense cost profit earnings assets liabilities cash "
                                 "debt tax margin dividend"))
# A question that puts two amounts side by side: only then is a second row asked for.
_TWO_AMOUNTS_RE = re.compile(
    r"\b(?:and|compar\w*|against|versus|vs\.?|ratio|percent(?:age)?|proportion|share|relative|contribut\w*)\b",
    re.IGNORECASE)


def _rows_asked_for(question: str, clean: Sequence[_Candidate]) -> list[_Candidate]:
    """The table rows whose labels best name what `question` asks about, best first: most of the
    label's words are in the question ("Research and development" for "how much did Apple spend
    on research and development"), weighed by how rare each word is among the rows' labels, and
    the caption's words break ties; better-ranked sources first on a tie. A question that puts
    amounts side by side ("operating expenses compared to revenue", "Services' share of total
    revenue") gets a row for each: a further row must name a word of the question that the rows
    before it did not. Empty when no label has half its words asked for."""
    rows = [c for c in clean if is_figure_row(c.text)]
    labels = [_row_terms(rows, k) for k in range(len(rows))]
    said = _terms(question)
    query = said.union(*(_ROW_NAMES.get(word, set()) for word in said))
    df: dict[str, int] = {}
    for terms in labels:
        for t in terms:
            df[t] = df.get(t, 0) + 1
    tables: dict[int, list[set[str]]] = {}  # each source's row labels
    for c, terms in zip(rows, labels):
        tables.setdefault(id(c.source), []).append(terms)
    picks: list[_Candidate] = []
    covered: set[str] = set()
    most = MAX_ASKED_ROWS if _TWO_AMOUNTS_RE.search(question) else 1
    while len(picks) < most:
        best: tuple[float, float, int, int, int] | None = None
        pick, named = None, set()
        for c, terms in zip(rows, labels):
            shared = terms & query
            new = shared - covered
            if not new or 2 * len(shared) < len(terms) or c in picks:
                continue
            if (terms & _QUALIFIERS) - said or (terms & _AMOUNT_NOUNS and not terms & _AMOUNT_NOUNS & query):
                continue
            if total_of_a_named_part(terms, said, tables[id(c.source)]):
                continue  # "Services net sales": the Services row of the table, not its "Total net sales"
            # What the question says decides; a word it only implies ("revenue": "net sales")
            # counts for a tenth, enough to pick a row that names nothing else the question says.
            idf = {t: math.log(1 + len(rows) / df[t]) for t in new}
            weight = sum(idf[t] for t in new & said) * len(shared & said) / len(terms)
            if not shared & said:
                weight = 0.1 * sum(idf[t] for t in new)
            # A further row: the one whose label the question names whole ("total revenue": "Total
            # net sales", not "Deferred revenue"), then by weight.
            whole = float(len(shared) == len(terms)) if picks else 0.0
            key = (whole, weight, len(_terms(c.caption) & query), -c.rank, -c.position)
            if best is None or key > best:
                best, pick, named = key, c, shared
        if pick is None:
            break
        picks.append(pick)
        # what it names, and the question's words it names in other words ("revenue": net sales)
        covered |= named | {w for w in said if _ROW_NAMES.get(w, set()) & named}
    return picks


# The words of an amount question that do not say what the amount is of: its verbs, its period.
_NOT_OF_THE_AMOUNT = frozenset(_terms(
    "how much many what which was were is are did does do pay paid spend spent make made generate generated have had "
    "report reported amount company quarter quarterly year fiscal month months ended end ending period three six nine "
    "twelve first second third fourth january february march april may june july august september october november "
    "december"))
PERIOD_TOKEN_RE = re.compile(r"^(?:q[1-4]|[1-4]q|h[12]|fy\d*|\d+)$")  # "q3", "fy2023", "h1": a period, not a thing


def amount_terms(question: str, names: Sequence[str] = ()) -> set[str]:
    """What the amount `question` asks for is of, as terms ("property", "plant", "equipment" for
    "How much did Apple pay for property, plant and equipment in Q3 2023?"), with what tables
    call it ("revenue": net sales); not its verbs, its period or the `names` it gives (the
    company's). Empty when it says nothing more."""
    terms = _terms(question) - _NOT_OF_THE_AMOUNT - _terms(" ".join(names))
    terms = {t for t in terms if not PERIOD_TOKEN_RE.match(t)}
    return terms.union(*(_ROW_NAMES.get(t, set()) for t in terms))


_RATIO_LABEL_RE = re.compile(r"^(?:as an? )?(?:percentage|percent|share|%)\s+of\b", re.IGNORECASE)


def _row_terms(rows: Sequence[_Candidate], k: int) -> set[str]:
    """The words a row's label names it by. A ratio row ("Percentage of total net sales 9 % 8 %")
    holds the share of the row above it (Research and development) in a base (total net sales):
    it is named by "percentage" and the row above's label, not by its base."""
    label = row_label(rows[k].text)
    m = _RATIO_LABEL_RE.match(label)
    if m is None:
        return _terms(label)
    above = row_label(rows[k - 1].text) if k > 0 and rows[k - 1].source is rows[k].source else ""
    return _terms(label[: m.end() - 2]) | _terms(above)


def asked_rows(question: str, sources: Sequence[Source]) -> list[tuple[Source, str, str]]:
    """For a question that asks for an amount: the table rows of `sources` that name what it
    asks about (`_rows_asked_for`), each as (its source, the row, its table's caption or ""),
    quoted as `quote_text` quotes; else []."""
    if not asks_for_figure(question):
        return []
    # "in Q1 2023": a row of Q1 2023's report, else of Q1 2024's (its comparative column); never
    # of the report whose file name says it is Q2's or Q1 2022's.
    rows: list[_Candidate] = []
    sources = of_the_company(question, sources)
    for report in ("same", "later"):
        mine = [s for s in sources if report_of(question, source_label(s)) == report]
        rows = rows or _rows_asked_for(question, [c for c in _candidates(mine) if not c.noise])
    return [(row.source, row.text, row.caption) for row in rows]


def of_the_report(question: str, sources: Sequence[Source]) -> list[Source]:
    """The sources to quote for `question`: "in the Q3 2022 10-Q", those of that report when any
    is among them (not the Q3 2023 report's sentences about its own quarter); else all."""
    own = [s for s in sources if report_of(question, source_label(s)) == "same"]
    return own or list(sources)


def _whose(source: Source) -> str:
    """What a source's document is named by: its title, path and identity ("apple inc."), lower case."""
    return f"{source.title or ''} {source.path or ''} {(source.metadata or {}).get(LABEL_KEY, '')}".lower()


def document_names(question: str, sources: Sequence[Source]) -> list[str]:
    """The names `question` gives ("Apple's", "Q3") that name some source's document, bare and
    lower case ("apple", "q3")."""
    named = dict.fromkeys(n.split("'")[0].split("\u2019")[0].lower() for n in _names(question))
    return [n for n in named if any(n in _whose(s) for s in sources)]


def of_the_company(question: str, sources: Sequence[Source]) -> list[Source]:
    """The sources of the one company `question` names ("Amazon's effective tax rate": Amazon's
    filings, not Apple's), when it names one that some sources' documents are of; else all."""
    companies = {n for n in document_names(question, sources) if len(n) > 2 and not PERIOD_TOKEN_RE.match(n)}
    if len(companies) != 1:
        return list(sources)
    [company] = companies
    return [s for s in sources if company in _whose(s)]


def source_label(source: Source) -> str:
    """The document's title and file name, which the model is shown above the passage."""
    return f"{source.title or ''} {os.path.basename((source.path or '').replace(chr(92), '/'))}"


# The words a question names a line of a financial table by: each is an amount of its own.
_ITEM_RE = re.compile(
    r"\b(?:(?:operating|net|gross|total|other)\s+)?(?:revenues?|sales|income|expenses?|expenditures?|costs?"
    r"|profits?|loss(?:es)?|earnings|assets|liabilities|dividends?|debts?|taxe?s?|inventor(?:y|ies)|cash flows?)\b",
    re.IGNORECASE)


def unfound_amounts(question: str, sources: Sequence[Source]) -> list[str]:
    """The amounts a question puts side by side ("operating expenses ... compared to its
    revenue") that no table row found among `sources` names, each as the question says it. Empty
    unless the question compares amounts and at least one of its rows was found (the document
    whose table to look in)."""
    if not asks_for_figure(question) or not _TWO_AMOUNTS_RE.search(question):
        return []
    rows = _rows_asked_for(question, [c for c in _candidates(sources) if not c.noise])
    if not rows:
        return []
    named = set().union(*(_terms(row_label(r.text)) for r in rows))
    out = []
    for m in _ITEM_RE.finditer(question):
        stems = _terms(m.group(0))
        aliases = stems.union(*(_ROW_NAMES.get(t, set()) for t in stems))
        if not stems & named and not (aliases - stems and aliases - stems <= named):
            out.append(m.group(0).lower())
    return list(dict.fromkeys(out))


def amount_row(amount: str, sources: Sequence[Source]) -> tuple[Source, str, str] | None:
    """The table row among `sources` that is `amount` itself ("revenue": "Total net sales" or
    "Revenues", not "Deferred revenue"): every word of its label is the amount's, what tables
    call it, "total" or "net". A total first (a segment's "Net sales" under "Europe:" is a part),
    then the best-ranked source. As (its source, the row, its caption)."""
    stems = _terms(amount)
    aliases = stems.union(*(_ROW_NAMES.get(t, set()) for t in stems))
    allowed = aliases | {"total", "net"}
    best: tuple[bool, int, _Candidate] | None = None
    for c in _candidates(sources):
        if c.noise or not is_figure_row(c.text):
            continue
        label = _terms(row_label(c.text))
        if label and label <= allowed and label & aliases:
            key = ("total" in label, -c.rank)
            if best is None or key > best[:2]:
                best = (*key, c)
    return None if best is None else (best[2].source, best[2].text, best[2].caption)


# ... and what a table calls it, to search by.
_ROW_WORDS = {"revenue": "net sales", "revenues": "net sales", "earnings": "net income", "expenditure": "expenses",
              "expenditures": "expenses"}


def row_search_words(amount: str) -> str:
    """What to search a document for to find the row of `amount`: the question's word and what
    tables call it ("revenue": "revenue net sales")."""
    return f"{amount} {_ROW_WORDS.get(amount, '')}".strip()


def table_caption(sentences: Sequence[str], row: int) -> int | None:
    """Which of `sentences` (a passage's, in order) introduces the table that `sentences[row]`
    is a row of: going back over the table's other rows and its short column headings, the
    first sentence, if it ends with a colon ("... were as follows (in millions):")."""
    for j in range(row - 1, max(-1, row - 41), -1):
        text = sentences[j].strip()
        if is_figure_row(text) or (len(text.split()) <= 8 and not _ENDS_SENTENCE_RE.search(text)):
            continue
        return j if text.endswith(":") else None
    return None


def _running_line(row: str, source: Source) -> bool:
    """Is the "row" only the document's name and numbers ("gnuplot 5.4 99"): a running header or
    footer with its page number?"""
    name = f"{source.title or ''} {(source.path or '').replace(chr(92), '/').rsplit('/', 1)[-1]}"
    return _terms(row_label(row)) <= _terms(re.sub(r"[-_.]+", " ", name))


def _caption(cands: Sequence[_Candidate], row: _Candidate) -> _Candidate | None:
    """The candidate that introduces the table `row` is in (`table_caption`): a row alone does
    not say what its figures are or which period each column is."""
    mine = [c for c in cands if c.source is row.source]
    j = table_caption([c.text for c in mine], mine.index(row))
    return mine[j] if j is not None else None


COLUMNS = "Columns:"


def column_line(source: Source, row: int | str) -> str:
    """"Columns: Three Months Ended June 30, 2022 2023", said before a quoted table row whose
    headings name a year per column (from its passage, or from its table's headings on the page):
    a row alone ("Operating income 3,669 4,774") does not say which figure is which period. `row`:
    the row's index among the passage's sentences, or the row as quoted. "" when no headings
    tell. EdgeChat's own words: the answer's checks read it as no claim."""
    content = source.content if isinstance(source.content, str) else ""
    texts = [content[s:e] for s, e in split_sentences(content)]
    if isinstance(row, str):
        row = next((i for i, t in enumerate(texts) if quote_text(t) == row), -1)
    if not 0 <= row < len(texts):
        return ""
    heading, _ = column_headings(texts, table_caption(texts, row), row, source.table_header)
    return f"{COLUMNS} {_heading_span(heading)}" if heading else ""


_HEADING_START_RE = re.compile(r"\b(?:(?:three|six|nine|twelve) months ended|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|"
                               r"oct|nov|dec)[a-z]*\.? \d{1,2},|(?:19|20)\d\d\b)", re.IGNORECASE)
_HEADING_END_RE = re.compile(r"(?:19|20)\d\d(?!.*(?:19|20)\d\d)")


def _heading_span(heading: str) -> str:
    """Headings as a reader needs them: from the first period they name to the last year, without
    the page's running text or the caption run into them ("Table of Contents AMAZON.COM, INC.
    ... (unaudited) Three Months Ended June 30, ... 2022 2023 North America")."""
    start = _HEADING_START_RE.search(heading)
    end = _HEADING_END_RE.search(heading)
    return heading[start.start():end.end()] if start and end and end.end() > start.start() else heading


def _question(messages: Sequence[ChatMessage]) -> str:
    for m in reversed(messages):
        if m.role == Role.USER and not m.pinned:
            return m.content
    for m in reversed(messages):
        if m.role == Role.USER:
            return m.content
    return ""


class ExtractiveClient:
    """`ChatClient` that quotes sources instead of generating. Deterministic and instant."""

    name = "extractive"
    kind = ClientKind.EXTRACTIVE
    context_length = 1_000_000

    def __init__(self, embedder: Any | None = None) -> None:
        """`embedder` (optional, anything with `embed(texts) -> normalised rows`) lets the
        sentence choice weigh meaning as well as shared words."""
        self._embed = embedder.embed if embedder is not None else None

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def answer_sentences(
        self, question: str, sources: Sequence[Source], rows: Sequence[tuple[Source, str, str]] | None = None
    ) -> list[tuple[str, int]]:
        """The quoted sentences and the ordinal each one cites, in answer order. `rows`: the table
        rows asked for (`asked_rows`), when they were found among more sources than these."""
        top = sorted(of_the_report(question, sources), key=lambda s: s.ordinal)[:MAX_SOURCES]
        if rows is None:  # a row asked for may be in a source past the top ones (an amount's row added)
            rows = asked_rows(question, sources)
        top += [holder for holder, _, _ in rows if holder not in top]
        out: list[tuple[str, int]] = []
        for c in _select(question, top, self._embed, rows):
            heading = column_line(c.source, c.position) if is_figure_row(c.text) else ""
            if heading and (heading, c.source.ordinal) not in out:
                out.append((heading, c.source.ordinal))  # which column is which period, before its rows
            out.append((c.text, c.source.ordinal))
        return out

    def stream(
        self,
        messages: Sequence[ChatMessage],
        options: ChatOptions,
        cancel: threading.Event | None = None,
    ) -> Iterator[ChatUpdate]:
        text = ""
        if cancel is not None and cancel.is_set():
            yield ChatUpdate(done=True, text=text, stop_reason=StopReason.CANCELLED)
            return
        sources = tuple(options.sources)
        if not sources:
            pieces = [NO_MATCH_TEXT]
        else:
            sentences = self.answer_sentences(_question(messages), sources)
            pieces = [f"{s} [{n}]" for s, n in sentences] or [NO_TEXT_TEXT]
        budget = max(1, int(options.max_new_tokens))
        used = 0
        for piece in pieces:
            if cancel is not None and cancel.is_set():
                yield ChatUpdate(done=True, text=text, stop_reason=StopReason.CANCELLED)
                return
            cost = self.count_tokens(piece)
            if used + cost > budget:
                if not text:  # not even one sentence fits: give its first words
                    delta = " ".join(piece.split()[:budget])
                    text = delta
                    yield ChatUpdate(delta=delta, text=text)
                yield ChatUpdate(done=True, text=text, stop_reason=StopReason.MAX_TOKENS)
                return
            # Each quote on a line of its own: a row or a caption that does not end a sentence is
            # a sentence of its own to the answer's checks and citations, and a quote's "It ..."
            # or "This ..." is not read as said of the quote before it, from another place.
            delta = piece if not text else "\n" + piece
            text += delta
            used += cost
            yield ChatUpdate(delta=delta, text=text)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)
