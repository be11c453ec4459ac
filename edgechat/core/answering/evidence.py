"""Evidence first: the few sentences and table rows of the retrieved passages that answer the
question, scored. They are what the model is given, what the answer is checked against, and what
the user sees highlighted under it.

Every passage is cut into quotes (`split_quotes`; a table row is read with its table's headings),
each scored by meaning (alone, and in its context), the question's terms and its passage's rank;
`select` keeps the best few, each with the quote after it, and says how strong the best is (whether
the documents say anything about the question at all). What a reader never sees as content
(comments, running headers and footers, contents entries) is not quoted. docs/answers.md
("Evidence first") gives the method, docs/answers-measurements.md the reasons.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgechat.core.answering.citations import MARKER_RE, ends_abbreviation, trimmed
from edgechat.core.answering.words import figures, terms
from edgechat.core.indexing.context import HEADING_CHARS, HEADING_LINES, Table, find_tables
from edgechat.core.records import Source

__all__ = ["Quote", "Selection", "is_row", "quote_text", "select", "split_quotes"]

MAX_QUOTES = 6  # quotes given to the writer
MAX_ANCHORS = 3  # of them the best-scoring; each brings the quote after it
MAX_PER_PASSAGE = 4
READ_FOR_MEANING = 40  # quotes embedded (the best by terms and position); the rest are scored by terms
W_MEANING, W_TERMS, W_POSITION = 0.55, 0.35, 0.10
KEEP_SHARE = 0.6  # a quote after the first needs this share of the best score
NEIGHBOURS, W_NEIGHBOUR = 2, 0.35  # quotes either side whose best score lends a share
W_FIGURE = 0.1  # for a quote with a figure, when the question asks for an amount or a date
READ_IN_CONTEXT = True  # a quote's meaning is also read under its title, after the quote before it
MIN_WORDS = 3
FRAME_WORDS = 15  # a running header or footer is at most this long

_END_RE = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]\u00bb]*(?=\s|$)")
_ITEM_RE = re.compile(r"^\s*(?:#{1,6}\s|[-*\u2022\u25aa\u2013]\s|\d{1,3}[.)]\s|>\s)")
_CELL_RE = re.compile(r"^\(?[-\u2212$\u20ac\u00a3]?\d[\d,]*(?:\.\d+)?\)?%?$|^[-\u2013\u2014$\u20ac\u00a3%]$")
_SENTENCE_END_RE = re.compile(r"[.!?:;\u2026][\"'\u201d\u2019)\]\u00bb]*$")
_LEADER_RE = re.compile(r"(?:\.\s?){4,}|_{4,}|-{4,}|={3,}")
_DOC_MARKER_RE = re.compile(r"\s*" + MARKER_RE.pattern)
_DIGITS_RE = re.compile(r"\d+")
# A question asking for an amount, a size, a time or a default: its answer holds a figure.
_ASKS_FIGURE_RE = re.compile(
    r"\bhow (?:many|much|long|large|big|deep|often|old|far|high|wide|tall|fast|soon)\b"
    r"|\b(?:default|maximum|minimum|largest|smallest|lowest|highest|total)\b"
    r"|\bwhat (?:percentage|year|date|time|size|number|amount)\b|\bwhen\b", re.IGNORECASE)


def is_row(line: str) -> bool:
    """Is `line` a row of a table: cells split by "|", or words followed by two or more figures
    ("Operating income 3,669 4,774")?"""
    s = line.strip()
    if s.count("|") >= 2:
        return sum(any(ch.isalnum() for ch in c) for c in s.strip("|").split("|")) >= 2
    tokens = s.split()
    cells = 0
    while tokens and _CELL_RE.match(tokens[-1]):
        cells += 1
        tokens.pop()
    return cells >= 2 and any(sum(ch.isalpha() for ch in w) >= 2 for w in tokens)


def _stands_alone(line: str, previous: str | None, following: str | None) -> bool:
    """A line that is a unit of its own: a table row, a heading, a title. A line that continues a
    wrapped sentence (the one before did not end one) is not."""
    s = line.strip()
    if s.startswith("#") or is_row(s):
        return True
    if len(s.split()) > 8 or _SENTENCE_END_RE.search(s):
        return False
    if previous is not None and not _SENTENCE_END_RE.search(previous.strip()):
        return False
    return not (following or "").lstrip()[:1].islower()


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraph spans, with headings, list items and table rows split off on their own. A single
    line break inside a paragraph (a PDF's wrap) does not end a block."""
    lines = text.splitlines(keepends=True)
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    pos = 0
    previous: str | None = None
    for line, following in zip(lines, [*lines[1:], None]):
        line_start, pos = pos, pos + len(line)
        alone = bool(line.strip()) and _stands_alone(line, previous, following)
        if start is not None and (not line.strip() or alone or _ITEM_RE.match(line)):
            blocks.append((start, line_start))
            start = None
        if alone:
            blocks.append((line_start, pos))
        if not line.strip() or alone:
            previous = None
        else:
            start, previous = line_start if start is None else start, line
    if start is not None:
        blocks.append((start, len(text)))
    return blocks


def split_quotes(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences, items, headings and table rows of `text`, whitespace trimmed. A
    sentence too short to stand alone ("Default: 120000.", "(See below.)") stays with the sentence
    before it in its paragraph or item: it finishes what that one says."""
    spans: list[tuple[int, int]] = []
    for b_start, b_end in _blocks(text):
        cut = b_start
        block: list[tuple[int, int]] = []
        for m in [*_END_RE.finditer(text, b_start, b_end), None]:
            if m is not None and ends_abbreviation(text, m):
                continue
            end = b_end if m is None else m.end()
            if block and not _worth_reading(text[cut:end]) and text[cut:end].strip():
                block[-1] = (block[-1][0], end)
            else:
                block.append((cut, end))
            cut = end
        spans.extend(block)
    return _lists_joined(text, trimmed(text, spans))


def _lists_joined(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A list item too short to read alone ("* Returns: {boolean}", "* `--cpu-prof-dir`") is read
    with the item or heading before it, and the first with the line that introduces the list
    ("Affects the default output directory of:"): alone, it says nothing, and would not be quoted."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        piece = text[s:e]
        short_item = not piece.startswith("#") and _ITEM_RE.match(piece) and not _worth_reading(piece)
        if out and short_item and not text[out[-1][1]:s].strip():
            before = text[out[-1][0]:out[-1][1]]
            if before.rstrip().endswith(":") or _ITEM_RE.match(before):
                out[-1] = (out[-1][0], e)
                continue
        out.append((s, e))
    return out


def quote_text(raw: str) -> str:
    """A piece of a document as it is quoted: whitespace runs made one space and the document's
    own bracketed numbers ("[12]") dropped, so that every marker in an answer is EdgeChat's."""
    def drop(m: re.Match[str]) -> str:
        following = m.string[m.end(): m.end() + 1]
        return "" if following and following in ".,;:!?)" else " "

    text, previous = raw, None
    while text != previous:  # removing "[7]" from "[1, [7] 2]" leaves a marker behind
        previous, text = text, _DOC_MARKER_RE.sub(drop, text)
    return " ".join(text.split())


def _worth_reading(text: str) -> bool:
    """Not a fragment: enough words with letters, and not a contents line of dot leaders."""
    if _LEADER_RE.search(text):
        return False
    words = [w for w in text.split() if any(ch.isalpha() for ch in w)]
    return len(words) >= MIN_WORDS or (is_row(text) and len(words) >= 1)


@dataclass
class Quote:
    """`source.content[start:end]`: a sentence or row of a retrieved passage, scored against the
    question."""

    source: Source
    start: int
    end: int
    text: str  # quote_text of the span
    rank: int  # the passage's rank among those read, from 0
    row: bool = False  # a table row: read with its table's headings (`headings`)
    headings: str = ""  # a row's table headings (`_headings_of_row`)
    score: float = 0.0
    meaning: float = 0.0
    term_share: float = 0.0

    @property
    def reading(self) -> str:
        """What the quote says, with its table's headings when it is a row."""
        return f"{self.headings} {self.text}".strip() if self.row else self.text


@dataclass
class Selection:
    """What `select` found: the chosen quotes, best first, and the best score of all quotes read."""

    quotes: list[Quote]
    best: float
    read: int  # quotes read
    passages: int  # passages read
    ranked: list[Quote] = field(default_factory=list)  # every quote read, best first


# Formats printed on pages, whose running headers and footers are the page's frame.
_PAGINATED = (".pdf",)
# Formats whose comments ("<!-- ... -->") their reader never sees: Markdown and HTML.
_HIDES_COMMENTS = (".md", ".markdown", ".html", ".htm", ".xhtml")
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_LINK_DEFINITION_RE = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$", re.MULTILINE)  # Markdown's "[label]: url"


def _as_shown(src: Source) -> str:
    """The passage as its reader sees it: in a format that hides its comments, each comment is
    blanked (its line breaks kept, so every offset still points into `src.content`). A comment
    is what a document keeps from its reader (an edit history, a note to its authors), so it is
    not what the document says; nor is a Markdown link's definition, which says where it goes. A
    table written in HTML inside Markdown is read as rows of cells (`_html_rows_as_lines`)."""
    path, blank = src.path.lower(), lambda m: re.sub(r"[^\n]", " ", m.group())
    if not path.endswith(_HIDES_COMMENTS):
        return src.content
    text = _COMMENT_RE.sub(blank, src.content)
    if not path.endswith((".md", ".markdown")):
        return text
    return _html_rows_as_lines(_LINK_DEFINITION_RE.sub(blank, text))


_ROW_EDGE_RE = re.compile(r"<tr\b[^>]*>|</tr\s*>", re.IGNORECASE)  # where a row of an HTML table begins or ends
_TAG_RE = re.compile(r"<(/?)(\w+)[^>]*>")


def _html_rows_as_lines(text: str) -> str:
    """`text` with each row of an HTML table in it (written in Markdown) as its reader sees it:
    one line of cells split by "|", as a row written in Markdown is, every tag and line break of
    it blanked (its length kept, as in `_as_shown`). A passage may begin or end inside a row: the
    part before its first row end, or after its last row start, is such a row too."""
    edges = list(_ROW_EDGE_RE.finditer(text))
    if not edges:  # most passages: nothing to rewrite
        return text
    spans = [(a.start(), b.end()) for a, b in zip(edges, edges[1:])
             if not a.group().startswith("</") and b.group().startswith("</")]
    if edges[0].group().startswith("</"):
        spans.insert(0, (0, edges[0].end()))
    if not edges[-1].group().startswith("</"):
        spans.append((edges[-1].start(), len(text)))
    out = list(text)
    for start, end in spans:
        out[start:end] = _TAG_RE.sub(_cell_edge, text[start:end]).replace("\n", " ").replace("\r", " ")
    return "".join(out)


def _cell_edge(tag: re.Match[str]) -> str:
    """A tag of a table row, blanked: "|" where a cell begins or the row ends, else spaces."""
    name, closing = tag.group(2).lower(), bool(tag.group(1))
    starts = (name in ("td", "th") and not closing) or (name == "tr" and closing)
    return ("|" if starts else " ") + " " * (len(tag.group()) - 1)


def _quotes_of(sources: Sequence[Source], searched: Mapping[str, str] | None = None) -> list[Quote]:
    """Every quote worth reading. In a document printed on pages (a PDF), a short line that recurs
    on other pages (a running header or footer, page number aside) is the page's frame, not what
    it says: left out. A sentence too long for a header that recurs is the document saying it
    twice, and a page of any other format has no frame: kept. `searched` (chunk id -> the passage
    as it was indexed for search) tells the frame the whole document showed when it was indexed:
    a line left out there (a running footer, a contents entry) is left out here too, even when no
    other page of its document is among those read."""
    shown = [(src, _as_shown(src)) for src in sources]
    split = [(src, text, [(s, e, _DIGITS_RE.sub("#", " ".join(text[s:e].lower().split())))
                          for s, e in split_quotes(text)]) for src, text in shown]
    pages_of: dict[tuple[str, str], set[int]] = {}
    for src, _, spans in split:
        for _, _, key in spans:
            pages_of.setdefault((src.path, key), set()).add(src.page)
    out: list[Quote] = []
    for rank, (src, text, spans) in enumerate(split):
        left_out = _left_out(src.content, (searched or {}).get(src.chunk_id))
        tables = find_tables(text, min_rows=1, head_lines=HEADING_LINES, max_chars=HEADING_CHARS)
        for s, e, key in spans:
            if (len(pages_of[src.path, key]) > 1 and len(key.split()) <= FRAME_WORDS
                    and src.path.lower().endswith(_PAGINATED)):
                continue
            if any(a <= s and e <= b for a, b in left_out):
                continue
            if _worth_reading(said := quote_text(text[s:e])):
                row = is_row(text[s:e])
                header = _headings_of_row(src, text, tables, s) if row else ""
                out.append(Quote(src, s, e, said, rank, row=row, headings=header))
    return out


def _headings_of_row(src: Source, text: str, tables: Sequence[Table], at: int) -> str:
    """The headings of the table the row at `at` belongs to: those the passage holds above its
    rows, else, for the table the passage starts inside of, those above the passage on its page
    (`Source.table_header`). A row of a table that begins further down is not read under the
    headings of another table above it: "" when its own are not found."""
    table = next((t for t in tables if t.body <= at < t.end), None)
    if table is None:
        return ""
    return src.table_header if src.table_header and not text[:table.start].strip() else table.header


def _left_out(text: str, searched: str | None) -> list[tuple[int, int]]:
    """The spans of `text`'s lines that its searched form (`searched`) leaves out."""
    if searched is None or searched == text:
        return []
    kept = {line.strip() for line in searched.splitlines()}
    pieces = text.splitlines(keepends=True)
    starts = itertools.accumulate(map(len, pieces), initial=0)
    return [(s, s + len(p)) for s, p in zip(starts, pieces) if p.strip() and p.strip() not in kept]


def _term_shares(question_terms: set[str], quotes: Sequence[Quote]) -> list[float]:
    """Per quote: the question's terms it holds, weighted by rarity among the quotes (idf)."""
    held = [terms(q.reading) & question_terms for q in quotes]
    n = len(quotes)
    idf = {t: math.log(1 + n / (1 + sum(t in h for h in held))) for t in question_terms}
    total = sum(idf.values()) or 1.0
    return [sum(idf[t] for t in h) / total for h in held]


def _in_context(quotes: Sequence[Quote]) -> list[str]:
    """Each quote as its reader meets it: under its title, after the quote before it in its passage
    ("Server options: The backlog limits pending connections. Its default is 511.")."""
    out: list[str] = []
    before: dict[int, Quote] = {}
    for q in quotes:
        previous = before.get(id(q.source))
        out.append(f"{q.source.title}: " + (f"{previous.reading} " if previous else "") + q.reading)
        before[id(q.source)] = q
    return out


def _scores(question: str, quotes: Sequence[Quote], embed: Callable[[list[str]], Any] | None,
            n_sources: int, vectors: dict[int, np.ndarray]) -> tuple[list[float], list[float]]:
    """Each quote's score against `question`, its meaning read in context (`_in_context`) where that
    is closer, and read alone (which says how strong the evidence is: context lifts every quote). The
    last call's meaning and term share stay on the quotes; `vectors` keeps embeddings between calls."""
    shares = _term_shares(terms(question), quotes)
    out = [W_TERMS * share + W_POSITION * (1 - q.rank / n_sources) for q, share in zip(quotes, shares)]
    for q, share in zip(quotes, shares):
        q.term_share, q.meaning = share, 0.0
    if embed is None:  # without an embedder, terms carry the weight of meaning too
        out = [o + W_MEANING * share for o, share in zip(out, shares)]
        return out, out
    alone = list(out)
    first = sorted(range(len(quotes)), key=lambda i: -out[i])[:READ_FOR_MEANING]
    new = [i for i in first if i not in vectors]
    texts = [quotes[i].reading for i in new]
    if READ_IN_CONTEXT and new:
        context = _in_context(quotes)
        texts += [context[i] for i in new]
    rows = np.asarray(embed([question] + texts), dtype=np.float32)
    for k, i in enumerate(new):
        vectors[i] = rows[1 + k::len(new)]  # the quote alone, then in its context
    for i in first:
        cosines = vectors[i] @ rows[0]
        quotes[i].meaning = float(cosines.max())
        out[i] += W_MEANING * max(0.0, quotes[i].meaning)
        alone[i] += W_MEANING * max(0.0, float(cosines[0]))
    return out, alone


def _ordered(question: str, quotes: Sequence[Quote], scores: Sequence[float]) -> list[float]:
    """The scores the quotes are ranked by: each quote's own, plus a share of its best neighbour's
    in its passage, plus the figure bonus when the question asks for one (module docstring)."""
    asks_figure = bool(_ASKS_FIGURE_RE.search(question))
    in_passage: dict[int, list[int]] = {}
    for i, q in enumerate(quotes):
        in_passage.setdefault(id(q.source), []).append(i)
    out = list(scores)
    for ids in in_passage.values():
        for j, i in enumerate(ids):
            near = ids[max(0, j - NEIGHBOURS): j] + ids[j + 1: j + 1 + NEIGHBOURS]
            out[i] += W_NEIGHBOUR * max((scores[k] for k in near), default=0.0)
            if asks_figure and figures(quotes[i].text):
                out[i] += W_FIGURE
    return out


# Where a question asking several things divides: after a question mark that more text follows, and
# before "and" (or ", and") that starts a new question word ("How long ..., and what event ...").
_PART_RE = re.compile(r"\?\s+(?=\S)|,?\s+and\s+(?=(?:what|which|how|why|who|whom|whose|where|when)\b)",
                      re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """The things `question` asks, each on its own ("What does X limit, and why is Y?" -> "What
    does X limit", "why is Y?"): one part when it asks one thing. A piece without two content terms
    of its own is not a part."""
    parts = [p.strip() for p in _PART_RE.split(question) if len(terms(p)) >= 2]
    return parts if len(parts) > 1 else [question]


# A question's opening phrase that says where to look, up to the comma after it (not one in a date):
# "In the 2019 trial of folic acid in 151 patients, at which dose ...?", "According to the FAQ, ...".
_WHERE_RE = re.compile(r"^\s*(?:in|according to|under|per|for|from|within|on|of)\b(?:[^,?]|,\s*(?=\d))*?,\s+"
                       r"(?=[^\d\s])", re.IGNORECASE)


def select(question: str, sources: Sequence[Source], embed: Callable[[list[str]], Any] | None = None, *,
           naming: Sequence[str] = (), searched: Mapping[str, str] | None = None) -> Selection:
    """The quotes of `sources` (in retrieval order) that best answer `question`. `naming`: the
    question's words that say which document it is about (edgechat.core.search.subject); they
    chose the documents and say nothing about which sentence answers, so they are left out of the
    question as the quotes are ranked, as is an opening phrase that says where to look (`_WHERE_RE`).
    `searched`: each passage as indexed for search, its boilerplate left out (see `_quotes_of`)."""
    quotes = _quotes_of(sources, searched)
    if not quotes:
        return Selection([], 0.0, 0, len(sources))
    n_sources = max(1, len(sources))
    named = (re.compile(r"\b(?:" + "|".join(re.escape(w) for w in naming) + r")\w*", re.IGNORECASE)
             if naming else None)

    def what_is_asked(text: str) -> str | None:
        asked = _WHERE_RE.sub("", text, count=1)
        asked = asked if terms(asked) else text
        rest = " ".join(named.sub(" ", asked).split()) if named else asked
        return rest if rest != text and terms(rest) else None  # a question all names keeps them

    vectors: dict[int, np.ndarray] = {}
    # A question that asks several things: each part's own best quote is an anchor too, since the
    # quote that says the second thing seldom ranks high against the whole question.
    parts = question_parts(question)
    part_best: list[Quote] = []
    if len(parts) > 1:
        for part in parts:
            ordered = _ordered(part, quotes, _scores(what_is_asked(part) or part, quotes, embed, n_sources, vectors)[0])
            part_best.append(quotes[max(range(len(quotes)), key=lambda i: ordered[i])])
    # Per form of the question (as asked; what it asks: no naming words or where to look), each quote's score.
    rest = what_is_asked(question)
    scores = [_scores(form, quotes, embed, n_sources, vectors) for form in ([question, rest] if rest else [question])]
    ranking = _ordered(question, quotes, scores[-1][0])  # by what the question asks of the document
    for q, score in zip(quotes, ranking):
        q.score = score
    ranked = sorted(quotes, key=lambda q: -q.score)
    best = max(scores[0][1])  # whether the documents say anything about it: the question as asked, quotes alone
    chosen: list[Quote] = []
    seen: set[str] = set()
    per_passage: dict[int, int] = {}

    def take(q: Quote) -> bool:
        key = " ".join(sorted(terms(q.text) | set(figures(q.text))))
        if key in seen or per_passage.get(q.rank, 0) >= MAX_PER_PASSAGE or len(chosen) >= MAX_QUOTES:
            return False
        seen.add(key)
        per_passage[q.rank] = per_passage.get(q.rank, 0) + 1
        chosen.append(q)
        return True

    # The best quotes, each with the one after it in its passage: a sentence that matches the
    # question often names the subject, and the next one says the fact ("... can take a backlog
    # parameter." "The default value is 511."), or introduces it ("the following:"). The best
    # against the whole question comes first, then each part's best, then the next best.
    top = ranked[0].score
    parts_best = {id(q) for q in part_best}
    anchors = 0
    for q in [ranked[0], *part_best, *ranked[1:]]:
        if anchors >= MAX_ANCHORS or len(chosen) >= MAX_QUOTES:
            break
        if q.score < KEEP_SHARE * top and id(q) not in parts_best:
            continue
        if take(q):
            anchors += 1
            following = [o for o in quotes if o.source is q.source and o.start >= q.end]
            if following:
                take(min(following, key=lambda o: o.start))
    return Selection(chosen, best, len(quotes), len(sources), ranked)
