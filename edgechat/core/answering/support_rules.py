"""When source sentences say a claim: the rules `verify` applies to a window of them.

`index` reads each source into sentences with their terms, figures, names and marks (a denial, a
running footer); `Claim` is what a sentence of the answer says, as the windows are judged against
it; `accepts` decides whether one source sentence, or two adjacent ones, say it -- coverage and
meaning first, then the small words that turn a claim around -- and `row_support` whether a table
row read as a sentence holds a claim's figures in the right column. verify.py builds the claims,
runs these over every source and words the verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.answering.columns import is_figure_row, right_columns, row_label, total_of_a_named_part
from edgechat.core.answering.extractive import begins_cut, source_label, split_sentences, table_caption
from edgechat.core.answering.wording import (
    _CAP_WORD_RE,
    _CAUSE_RE,
    _FIGURE_RE,
    _MAYBE_RE,
    _META,
    _NUMBER_WORDS,
    _PDF_MARKS,
    _REFERS_BACK_RE,
    _WORD_RE,
    _YEAR_RE,
    _as_code,
    _changed_before_cause,
    _count_compounds,
    _denies,
    _directions,
    _furniture,
    _ident_pattern,
    _longest_missing_run,
    _names_in,
    _names_package,
    _negated,
    _norm_figure,
    _opposed,
    _ordinals,
    _quarters,
    _ranks,
    _rescaled,
    _same_periods,
    _scales,
    _setting_said,
    _stance_of_another,
    _table_unit,
    _terms,
    _turned,
    figures,
    month_spans,
    names_any_period,
    paired_periods,
)
from edgechat.core.indexing.context import LABEL_KEY
from edgechat.core.records import Source
from edgechat.core.search.retrieval import stem

MIN_COVERAGE = 0.65  # share of the sentence's content terms one or two adjacent source sentences hold
MIN_SIMILARITY = 0.5  # ... and the cosine of the best of those source sentences
HIGH_COVERAGE = 0.8  # nearly every term there: a looser similarity will do
MIN_SIMILARITY_HIGH_COVERAGE = 0.4
STRONG_SIMILARITY = 0.85  # a close paraphrase: one source sentence this close in meaning
MIN_COVERAGE_STRONG = 0.4  # ... still holding 40 % of the terms
RESTATED_MIN = 3  # a claim that says this many of the question's words (two: one of them) ...
RESTATED_COVERAGE = 2 / 3  # ... must have evidence that says this share of them
SUBJECT_COVERAGE = 0.66  # a bare cause's evidence: this share of what the question asks about before its "due to"
CAUSE_COVERAGE = 0.8  # a claim's cause ("due to ..."): this share of its terms in the evidence sentences
MISSING_RUN = 3  # this many of a claim's words in a row that its evidence does not say: a phrase of its own
SUBHEADING_WORDS = 4  # "Greater China:", "Rest of Asia Pacific:": a table's sub-heading names a part
FRAGMENT_COVERAGE = 0.75  # a bare phrase read with its question: that much of both in one source sentence

FORWARD_CAUSE_RE = re.compile(r"\b(?:contribut\w* to|led to|lead(?:s|ing)? to|result(?:s|ed|ing)? in|caus(?:e|es|ed|ing)\b(?! by)"
                               r"|dr(?:ove|ives|iven|iving)\b(?! by)|(?:had|has|have) an? (?:\w+ )?(?:impact|effect) on"
                               r"|(?:impact|affect)(?:s|ed)?\b(?! by))", re.IGNORECASE)


@dataclass
class SourceIndex:
    """One source read into sentences, with what the rules look up in each."""

    source: Source
    spans: list[tuple[int, int]]
    terms: list[set[str]]
    words: set[str]
    figures: set[str]
    sentence_figures: list[set[str]] = field(default_factory=list)
    sentence_texts: list[str] = field(default_factory=list)
    haystack: str = ""  # the passage, title and file name, lower case: where identifiers are looked up
    label: str = ""  # the title and file name, lower case
    label_terms: set[str] = field(default_factory=set)  # ... as terms: "Debian" from debian-faq.pdf
    negated: list[bool] = field(default_factory=list)  # per sentence: does it say "not", "unless"...
    denies: list[bool] = field(default_factory=list)  # ... outside a condition ("if there is no ...")
    furniture: list[bool] = field(default_factory=list)  # per sentence: a running header/footer, a page number
    cut: bool = False  # the passage begins in the middle of a sentence: its first one has lost its start
    identity: str = ""  # whose document and what it is, from its first pages ("apple inc. | form 10-q"), lower case
    vecs: np.ndarray | None = None


def source_words(content: str, label: str) -> set[str]:
    """The words a name in the answer may come from: the passage's, and its `source_label`'s
    ("R-data" from R-data.pdf)."""
    words = {w.lower() for w in _WORD_RE.findall(content + " " + label)}
    words |= {w.lower() for w in _CAP_WORD_RE.findall(label)}
    words |= {w[:-2] for w in words if w.endswith("'s")}  # "the Company's" says Company
    return words | {stem(w) for w in words}


def index_sources(sources: Sequence[Source]) -> list[SourceIndex]:
    """The sources read into sentences, in the order given."""
    out = []
    for src in sources:
        # Spacing modifier letters PDFs put for ASCII ones ("xˆ2" for "x^2", "˜/.Rprofile"): one
        # character for one, so the sentences' spans still index the passage.
        content = (src.content if isinstance(src.content, str) else "").translate(_PDF_MARKS)
        spans = split_sentences(content) or ([(0, len(content))] if content.strip() else [])
        texts = [MARKER_RE.sub(" ", content[s:e]) for s, e in spans]
        label = source_label(src)
        out.append(SourceIndex(
            source=src,
            spans=spans,
            terms=[_terms(t) for t in texts],
            words=source_words(content, label),
            figures={f for f, _ in figures(content)},
            sentence_figures=[{f for f, _ in figures(t)} for t in texts],
            sentence_texts=texts,
            negated=[_negated(t) for t in texts], denies=[_denies(t) for t in texts],
            haystack=f"{content} {label}".lower(),
            label=label.lower(),
            label_terms=_terms(re.sub(r"[-_.]+", " ", label)),
            cut=begins_cut(src),
            identity=str((src.metadata or {}).get(LABEL_KEY, "")).lower(),
        ))
        ix = out[-1]
        # A line of only the document's name and numbers (a running header, footer or page
        # number) or of parts between bars with nothing in lower case.
        ix.furniture = [_furniture(t) or not {w for w in ix.terms[j] - ix.label_terms if not w.isdigit()}
                        for j, t in enumerate(texts)]
    return out


def _holds_figures(ix: SourceIndex, j: int, claim: Claim) -> bool:
    """Does source sentence j alone hold the claim's figures with what they are about: every
    figure, every number word ("nine months", "third quarter") and most other words? "$5.0
    billion over nine months" is not supported by "$5.0 billion in the quarter" followed by
    "$10.5 billion over nine months"."""
    if not claim.figures <= ix.sentence_figures[j]:
        return False
    words = {t for t in claim.terms if not t.isdigit()}
    number_words = {t for t in words if t in _NUMBER_WORDS}
    if not number_words <= ix.terms[j]:
        return False
    if number_words and not _same_periods(ix.sentence_texts[j], claim.body, claim.figures):
        return False
    if (claim.figures & _changes(ix.sentence_texts[j])) - _changes(claim.body):
        return False  # "increased International net sales by $1.4 billion": a change, not the sales
    if (_gaps(claim.body) & claim.figures) - _gaps(ix.sentence_texts[j], loose=True):
        return False  # "hotter than Mercury by 465 degrees" from "hotter than Mercury's, about 465 degrees": Venus's own
    if not _paired_right(paired_periods(ix.sentence_texts[j]), claim):
        return False  # "$9.4 billion and $9.2 billion in Q3 2022 and Q3 2023": 9.4 is not Q3 2023's
    if j == 0 and ix.cut and _quarters(claim.body) and not names_any_period(ix.sentence_texts[j]):
        return False  # "[During the six months ended April 1, 2023, the Company] repurchased 262 million shares"
    row = is_figure_row(" ".join(ix.sentence_texts[j].split()))
    if _rescaled(claim.scales, _scales(ix.sentence_texts[j]), _unit_above(ix, j) if row else ""):
        return False
    if row and not right_columns(ix.sentence_texts, table_caption(ix.sentence_texts, j), j, claim.figures,
                                 claim.years, claim.latest, ix.source.table_header, span=claim.span, said=claim.body):
        return False  # a table row read as a sentence: its figure must still be from the right column
    return not words or len(words & ix.terms[j]) >= MIN_COVERAGE * len(words)


def _paired_right(pairs: dict[str, tuple[str, str | None]], claim: Claim) -> bool:
    """Is each of the claim's figures that the evidence pairs with a period ("$9.4 billion and $9.2
    billion in Q3 2022 and Q3 2023") of the year and length the claim is about? A fiscal year's
    quarter is dated a year before: Apple's Q1 2023 is the later of "December 31, 2022 and December
    25, 2021"."""
    for f in claim.figures & pairs.keys():
        year, span = pairs[f]
        if span and claim.span and span != claim.span:
            return False
        latest = all(year >= y for y, s in pairs.values() if s == span)
        fiscal = latest and any(y.isdigit() and int(y) == int(year) + 1 for y in claim.years)
        if claim.years and year not in claim.years and not fiscal:
            return False
    return True


_ABOUT = r"(?:about\s+|approximately\s+|nearly\s+|roughly\s+|almost\s+)?"
_BY_RE = re.compile(rf"\bby\s+{_ABOUT}$|\b(?:increase|decrease|decline|growth|reduction|rise|drop|change)s?\s+of\s+"
                    rf"{_ABOUT}$", re.IGNORECASE)
_CHANGE_RE = re.compile(r"\b(?:increase[sd]?|decrease[sd]?|reduce[sd]?|grew|grow[sn]?|rose|fell|decline[sd]?|"
                        r"improve[sd]?|up|down|higher|lower|changes?|changed|impact(?:ed)?|affect(?:ed)?|growth|"
                        r"reduction|rise|drop)\b", re.IGNORECASE)


def _changes(text: str) -> set[str]:
    """The figures `text` gives as the size of a change ("increased ... net sales by $1.4 billion",
    "an increase of 5%"): not the amount itself."""
    out = set()
    for m in _FIGURE_RE.finditer(text):
        before = text[max(0, m.start() - 80):m.start()]
        if _BY_RE.search(before) and _CHANGE_RE.search(before):
            out.add(_norm_figure(m))
    return out


_COMPARATIVE = r"\b(?!rather\b|other\b)(?:\w{2,}er|more|less|fewer)\s+than\b"
# "hotter than Mercury by 465 degrees": the figure is the gap between the two things compared
_COMPARED_BY_RE = re.compile(rf"{_COMPARATIVE}[^.;:!?]{{0,80}}?\bby\s+{_ABOUT}$", re.IGNORECASE)
# "465 degrees hotter than", "15% more than"
_GAP_AFTER_RE = re.compile(rf"^\s*(?:(?!(?:is|was|were|are|be|been|has|have|had|and|or|but|the|an?|its?)\b)[^\W\d]+\s+)"
                           rf"{{0,2}}{_COMPARATIVE}", re.IGNORECASE)
# "increased 2.1 points", "fell 5%": a change, "by" left out
_CHANGED_RE = re.compile(rf"\b(?:increase[sd]?|decrease[sd]?|rose|fell|grew|gained|lost|dropped|declined|up|down)\s+"
                         rf"{_ABOUT}$", re.IGNORECASE)


def _gaps(text: str, loose: bool = False) -> set[str]:
    """The figures `text` gives as the gap between two things it compares ("hotter than Mercury
    by 465 degrees", "465 degrees hotter than Mercury"); `loose`: also those it gives as the size
    of any change ("by 465", "an increase of 5%", "rose 5%"), as evidence for such a gap."""
    out = set()
    for m in _FIGURE_RE.finditer(text):
        before, after = text[max(0, m.start() - 120):m.start()], text[m.end():m.end() + 60]
        if _YEAR_RE.fullmatch(m.group(0).strip()):
            continue  # "the first nine months of 2023 was lower than": a year is never the gap
        if (_COMPARED_BY_RE.search(before) or _GAP_AFTER_RE.match(after)
                or loose and (_BY_RE.search(before) or _CHANGED_RE.search(before))):
            out.add(_norm_figure(m))
    return out


POSSESSIVE_RE = re.compile(r"['\u2019]s$")

# A row label's words a claim need not say: "Total" ("gross margin percentage": the Total row) and
# the words left out of every claim's terms ("Net cash provided by operating activities").
_UNSAID_LABEL_TERMS = frozenset({"total", *(stem(m) for m in _META)})


def names_word(text: str, word: str) -> bool:
    return bool(text) and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def _of_subjects(ix: SourceIndex, subjects: set[str], said: str) -> bool:
    """Is `ix` the document of each of the claim's `subjects` (its title or file name, or its
    identity: "Amazon" for AMAZON.COM, INC.'s filing), or does the evidence `said` name it?"""
    said = said.lower()
    return all(t in ix.label or names_word(ix.identity, t) or t in said for t in subjects)


def said_in(ix: SourceIndex, window: Sequence[int]) -> str:
    return " ".join(ix.sentence_texts[j] for j in window)


def _unit_above(ix: SourceIndex, row: int) -> str:
    """The unit the table that row `row` is in gives its figures ("in millions"): said nearest
    above it in the passage, else in the headings of the table the passage starts inside of."""
    return _table_unit(" ".join(ix.sentence_texts[max(0, row - 40) : row])) or _table_unit(ix.source.table_header)


def _bare(term: str) -> str:
    """A term without its possessive, counted as other terms are ("apple's" -> "appl")."""
    return stem(POSSESSIVE_RE.sub("", term)) if POSSESSIVE_RE.search(term) else term


def row_support(ix: SourceIndex, claim: Claim, terms: set[str], asked: set[str],
                told: bool = False) -> list[int] | None:  # fmt: skip
    """A claim about figures said by a table row: [caption, row] (or [row]) of `ix` when the
    row holds every figure of the claim, the claim names the row's label ("Research and
    development"), and the claim's other words are the table caption's, the question's
    (`asked`: "Apple", "first quarter") or at most one more (its verb: "spent"). A row's words
    are few, so the coverage rule of sentences cannot hold for it; its label and figures bind
    what the figure is.

    Which column: when the table's headings give each figure column a year, a figure must be
    from a column of a year the claim or question names (`years`), or of the latest year when
    the question asks about the latest period (`latest`) -- not last year's figure of the row.
    `told`: only a row whose headings tell its columns' years (a later year's report, read for
    its comparative column)."""
    if not _of_subjects(ix, claim.subjects, " ".join(ix.sentence_texts)):
        return None  # "Amazon's diluted earnings per share" from Apple's report
    words = {_bare(t) for t in terms if not t.isdigit()}  # "Amazon's" names Amazon
    asked = {_bare(t) for t in asked}
    rows = [" ".join(text.split()) for text in ix.sentence_texts]
    labels = [{t for t in _terms(row_label(row)) if not t.isdigit()} if is_figure_row(row) else set() for row in rows]
    named = [label - _UNSAID_LABEL_TERMS for label in labels]  # the rows as a claim names them
    # the sub-headings the claim names ("Japan:"): a row under another ("Americas:") is not its row
    heads = {k for k, row in enumerate(rows) if row.endswith(":") and len(row.split()) <= SUBHEADING_WORDS
             and ix.terms[k] and ix.terms[k] <= words}
    for j, text in enumerate(ix.sentence_texts):
        row = rows[j]
        if ix.furniture[j] or not claim.figures <= ix.sentence_figures[j] or not is_figure_row(row):
            continue
        label = labels[j]
        if not label or not label - _UNSAID_LABEL_TERMS <= words or (j == 0 and ix.cut):
            continue  # (a passage cut mid-row has lost the row's label's start: "[Total] net sales 117,154")
        if total_of_a_named_part(label, words, named):
            continue  # "Wearables ... net sales were $117,154": the claim names a part; "Total net sales" is the whole
        cap = table_caption(ix.sentence_texts, j)
        if heads and cap not in heads:
            continue  # "Japan net sales" from the "Net sales" row under "Americas:"
        said = ix.terms[j] | ix.label_terms | (ix.terms[cap] if cap is not None else set())
        if not claim.counted <= said | _terms(ix.source.table_header):
            continue  # "7,216 years" from "Term debt 7,216 11,128" (in millions of dollars)
        if not {t for t in words if t in _NUMBER_WORDS} <= said | asked:
            continue  # "nine months" where the table and the question say nothing of nine months
        if len(words - said - asked) > 1:
            continue
        if not right_columns(ix.sentence_texts, cap, j, claim.figures, claim.years, claim.latest,
                             ix.source.table_header, told, claim.span, claim.body):
            continue
        if _rescaled(claim.scales, _scales(text), _unit_above(ix, j)):
            continue  # "3,669 billion" from a table in millions
        return [cap, j] if cap is not None else [j]
    return None


@dataclass
class Claim:
    """What a claim sentence says, as the evidence windows are judged against it."""

    body: str
    terms: set[str]
    figures: set[str]  # normalised, the years the question names left out
    idents: list[str]  # code names
    calls: list[str]  # functions written as calls
    negated: bool
    ways: set[str]  # "up", "down"
    own_names: set[str]  # names the question does not give
    restated: set[str]  # the question's words the claim says
    fragment: bool  # a bare phrase read with its question
    certain: bool = False  # it says what is, with no "may", "can", "would" ...
    ranks: set[str] = field(default_factory=set)  # "most", "largest" ... that the question does not say
    echoes: list[str] = field(default_factory=list)  # code names that are also the question's words
    code: bool = False  # it writes code (`set xrange`): one source sentence must say it
    before: Sequence[str] = ()  # it refers back ("This command ..."): the claim before's code names
    cause: set[str] = field(default_factory=set)  # the terms of what it gives as a cause ("due to ...")
    settings: list[tuple[str, str]] = field(default_factory=list)  # "fill = FALSE": (name, value)
    advice: set[str] = field(default_factory=set)  # "you need to edit": what one must do, when not a common verb
    sequence: list[str] = field(default_factory=list)  # its terms in order, the question's left out
    says_back: bool = False  # "Yes, R will match it" to "will R match it?": yes or no and the question
    acronyms: set[str] = field(default_factory=set)  # "DBI", as written
    providers: set[str] = field(default_factory=set)  # "provided by R-data", unless the question says so too
    titles: set[str] = field(default_factory=set)  # a source's title said as part of the claim, lower case
    code_words: set[str] = field(default_factory=set)  # a line of code's words, each to be written as it is
    subjects: set[str] = field(default_factory=set)  # names it gives that name a source's document ("Maxima")
    scales: dict[str, set[str]] = field(default_factory=dict)  # figure -> "billion"... written after it
    years: set[str] = field(default_factory=set)  # the years it and the question name
    latest: bool = False  # the question asks about the latest period
    span: str | None = None  # "three" (a quarter), "six", "nine" or "twelve" months, as it or the question says
    ordinals: set[str] = field(default_factory=set)  # "third" ... that the question does not say
    counted: set[str] = field(default_factory=set)  # what its figures count ("years"): the evidence must say it
    spans: set[str] = field(default_factory=set)  # "nine" (months) ... that the question does not say
    bare_cause: bool = False  # "Because of ..." to "Why did Mac net sales decrease?"
    asked_ways: set[str] = field(default_factory=set)  # the change the question asks the cause of ("down")
    forward_cause: bool = False  # "X contributed to / led to / caused Y": one source sentence must say so
    asked_subject: set[str] = field(default_factory=set)  # ... and what changed, as the question's terms ("mac", "net", "sale")
    asked_names: set[str] = field(default_factory=set)  # a bare phrase's question's names ("Mac"): its evidence's too


def accepts(claim: Claim, ix: SourceIndex, window: list[int], covered: set[str], cov: float,
            sim: float | None) -> tuple[bool, str]:  # fmt: skip
    """Do the source sentences `window` of `ix` say `claim`? (ok, why not: "figures" when they say
    it without its figures, "names" when without its names, else ""). `covered`: their terms and
    the document's title's; `cov`: the share of the claim's terms among them; `sim`: the best
    cosine of the window's sentences to the claim (None without an embedder: words alone)."""
    if sim is None:
        ok = cov >= HIGH_COVERAGE
    else:
        ok = ((cov >= MIN_COVERAGE and sim >= MIN_SIMILARITY)
              or (cov >= HIGH_COVERAGE and sim >= MIN_SIMILARITY_HIGH_COVERAGE)
              or (sim >= STRONG_SIMILARITY and cov >= MIN_COVERAGE_STRONG and len(window) == 1))
    if not ok:
        return False, ""
    if claim.fragment and (cov < FRAGMENT_COVERAGE or not _terms(claim.body) <= covered):
        return False, ""  # a bare phrase: the sentence that says it must say nearly all the question asks
    for check in (_same_meaning, _names_said, _rest_said):
        why = check(claim, ix, window, covered)
        if why is not None:
            return False, why
    return True, ""


def _same_meaning(claim: Claim, ix: SourceIndex, window: list[int], covered: set[str]) -> str | None:
    """Do the sentences say what the claim says of its subject: the asked names and period, its
    negation, direction, cause, certainty and rank? None when they do, else why not ("asked",
    "period" or "")."""
    if claim.asked_names:
        said_words = set().union(*(source_words(ix.sentence_texts[j], source_label(ix.source)) for j in window))
        if not all(n in said_words or stem(n) in said_words or n in f"{ix.label} {ix.identity}"
                   for n in claim.asked_names):
            return "asked"  # "Because the ... decrease consisted of lower net sales of iPad" to "Why did
            # Mac net sales decrease?": a sentence about total net sales, not about the Mac
    if claim.spans and not claim.spans <= month_spans(" ".join(ix.sentence_texts[j] for j in window)):
        return "period"  # "decreased during the second quarter and first nine months": the evidence says six
    if claim.negated:
        # The sentence that says most of the claim must deny it too: in a pair, a "not" in the
        # other sentence is about something else ("the answer is no ... package skeleton" against
        # "CRAN will not accept ..." followed by "package.skeleton can help create ...").
        main = max(window, key=lambda j: len(claim.terms & ix.terms[j]))
        if not ix.negated[main]:
            return ""
    elif any(ix.denies[j] for j in window):
        return ""  # "warns when listed" is not "warns unless listed"
    ways = [w for w in (_directions(ix.sentence_texts[j]) for j in window) if w]
    if _opposed(claim.terms, set().union(*(ix.terms[j] for j in window))):
        return ""  # "disables the system() calls" from "This enables the int system(string s) calls"
    if claim.ways and ways and all(_turned(claim.ways, w) for w in ways):
        return ""  # "decreased" is not "the growth in"
    if claim.bare_cause:
        # "Because of lower net sales of laptops" to "Why did Mac net sales decrease?": the evidence must
        # give it as the cause of the change the question asks about ("Mac net sales decreased ... due
        # primarily to"), not of another ("sales by our sellers have higher payment processing ...
        # costs ... because ..." to "Why did fulfillment costs increase?")
        if not any(_causes_the_asked_change(ix, j, claim) for j in window):
            return ""
    elif claim.cause and not _changed_before_cause(claim.body) and any(
            _CAUSE_RE.search(ix.sentence_texts[j]) and _changed_before_cause(ix.sentence_texts[j]) for j in window):
        return ""  # "operating income was primarily due to increased sales": the evidence's cause is its increase's
    if claim.forward_cause and not any(
            (_CAUSE_RE.search(ix.sentence_texts[j]) or FORWARD_CAUSE_RE.search(ix.sentence_texts[j]))
            and len(claim.terms & ix.terms[j]) >= CAUSE_COVERAGE * len(claim.terms) for j in window):
        return ""  # "The weakness in foreign currencies contributed to lower net sales of iPhone and Mac":
        # one sentence on the currencies' impact on total net sales, the next on what the decrease consisted of
    if claim.certain and any(_MAYBE_RE.search(ix.sentence_texts[j]) for j in window):
        return ""  # "has entered into" is not "may enter into"
    if claim.ranks and not claim.ranks <= set().union(*(_ranks(ix.sentence_texts[j]) for j in window)):
        return ""  # "the most severe type ... wishlist": the evidence does not rank it
    return None


def _names_said(claim: Claim, ix: SourceIndex, window: list[int], covered: set[str]) -> str | None:
    """Do the sentences write the claim's names as it does (code names, acronyms, titles, packages,
    its own names)? None when they do, else why not ("names" or "")."""
    if claim.echoes and not all(any(_as_code(e, ix.sentence_texts[j]) for j in window) for e in claim.echoes):
        return "names"  # `integrate`, asked "which function integrates": a verb in "lsode integrate ODEs"
    if claim.subjects and not _of_subjects(ix, claim.subjects, said_in(ix, window)):
        return ""  # "in Maxima, you can ...", evidence from the Asymptote manual
    if claim.acronyms:
        written = " ".join(ix.sentence_texts[j] for j in window) + " " + source_label(ix.source)
        if not all(re.search(rf"(?<!\w){re.escape(a)}(?!\w)", written) for a in claim.acronyms):
            return "names"  # "the SORT function" from "To sort the rows ..., use order()"
    if claim.code_words:
        code_said = set(re.findall(r"[a-z][\w-]+", " ".join(ix.sentence_texts[j] for j in window).lower()))
        if not claim.code_words <= code_said:
            return "names"  # "set terminal image portrait [2,3]" from "set terminal imagen portrait [2,3]"
    counts = _count_compounds(claim.body)
    if counts:
        said = " ".join(ix.sentence_texts[j] for j in window).lower()
        if not all(re.search(rf"\b{c}\b", said) for c in counts):
            return ""  # "the one-sample Kolmogorov-Smirnov test" from "... between the two ecdf's"
    if _stance_of_another(claim.body, " ".join(ix.sentence_texts[j] for j in window)):
        return ""  # "you expect ..." from "the release team ... expect ..."
    if claim.titles:
        said = " ".join(ix.sentence_texts[j] for j in window).lower()
        if not all(t in said for t in claim.titles):
            return "names"  # "ITP: foo - Debian Developer's Reference": the manual's title, not the subject line
    if claim.providers:
        said = " ".join(ix.sentence_texts[j] for j in window).lower()
        if not all(_names_package(said, p) for p in claim.providers):
            return "names"  # "read.DIF provided by R-data": R-data is the manual, not a package
    if claim.own_names:
        said_words = set().union(*(source_words(ix.sentence_texts[j], source_label(ix.source)) for j in window))
        said_words |= {POSSESSIVE_RE.sub("", w) for w in said_words}  # "Mercury's" says Mercury
        said = " ".join(ix.sentence_texts[j] for j in window).lower()
        if not all(n in said_words or stem(n) in said_words
                   or (("_" in n or "-" in n) and _ident_pattern(n).search(said))
                   for n in claim.own_names):
            return "names"  # "in the XY plane": the sentence that says the rest does not say that
    return None


def _rest_said(claim: Claim, ix: SourceIndex, window: list[int], covered: set[str]) -> str | None:
    """Do the sentences say the rest: the question's words the claim restates, its advice, its
    settings, the terms of its cause, its ordinals, figures and code names? None when they do,
    else why not ("names", "figures" or "")."""
    if (len(claim.restated) >= RESTATED_MIN and len(claim.restated & covered) < RESTATED_COVERAGE * len(claim.restated)
            or len(claim.restated) == 2 and not claim.restated & covered):
        return ""  # what the claim says of the question's subject, its evidence does not
    if claim.says_back and not claim.terms <= covered:
        return ""  # "Yes, if you abbreviate an argument name R will match it": every word needs saying
    window_terms = set().union(*(ix.terms[j] for j in window))
    if claim.advice and not claim.advice <= window_terms:
        return ""  # "you need to edit default.target" from "systemd starts the services listed in"
    if _longest_missing_run(claim.sequence, covered) >= MISSING_RUN:
        return ""  # "Reading a million distinct integers takes too much time": the evidence says
        # "garbage collection takes an appreciable amount of time"
    if claim.settings and not all(any(_setting_said(n, v, ix.sentence_texts[j]) for j in window)
                                  for n, v in claim.settings):
        return "names"  # "setting fill = FALSE" against "blank.lines.skip = FALSE ... with fill = TRUE"
    if claim.cause:
        said_terms = set().union(*(ix.terms[j] for j in window))
        if len(claim.cause & said_terms) < CAUSE_COVERAGE * len(claim.cause):
            return ""  # "decreased ... due to lower sales of laptops": the evidence names iPhone models
    if claim.ordinals and not claim.ordinals <= set().union(*(_ordinals(ix.sentence_texts[j]) for j in window)):
        return ""  # "in the second and third periods": the evidence says no such period
    if claim.figures and not any(_holds_figures(ix, j, claim) for j in window):
        return "figures"
    if claim.counted and not claim.counted <= covered:
        return "figures"  # "the long-term debt is 7,216 years": the sentence with 7,216 counts no years
    if claim.idents or claim.calls or claim.before:
        said = " ".join(ix.sentence_texts[j] for j in window).lower() + " " + ix.label
        if not _names_in(said, claim.idents, claim.calls) or (
                claim.before and not names_what_before(ix, window[0], said, claim.before)):
            return "names"
    return None


def _causes_the_asked_change(ix: SourceIndex, j: int, claim: Claim) -> bool:
    """Does source sentence `j` give the claim's cause as the cause of the question's change: the
    question's subject and a change its way before the cause, the claim's cause after it?"""
    text = ix.sentence_texts[j]
    m = _CAUSE_RE.search(text)
    if m is None or len(claim.cause & ix.terms[j]) < CAUSE_COVERAGE * len(claim.cause):
        return False
    before = text[: m.start()]
    subject = {t for t in claim.asked_subject if POSSESSIVE_RE.sub("", t) not in f"{ix.label} {ix.identity}"}
    return ((not claim.asked_ways or bool(claim.asked_ways & _directions(before)))
            and len(subject & _terms(before)) >= SUBJECT_COVERAGE * len(subject))


def names_what_before(ix: SourceIndex, j: int, said: str, before: Sequence[str]) -> bool:
    """Does the evidence speak of a code name the claim before gave? It may name it itself, or its
    own "This file ..." may refer back to the source sentence before it, which names it."""
    prior = ix.sentence_texts[j - 1].lower() if j > 0 and _REFERS_BACK_RE.match(ix.sentence_texts[j]) else ""
    return any(_ident_pattern(b).search(said) or _ident_pattern(b).search(prior) for b in before)
