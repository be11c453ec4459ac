"""Every sentence of an answer, checked against the sources it was written from.

After the answer is written it is split into sentences (`citations.sentence_spans`) and each
one is classified (`records.Support`):

- NO_CLAIM: it states nothing to check -- "Here is what I found:", "I hope this helps." -- a
  sentence with fewer than two content words once meta words (found, sources, documents...)
  are left out, no figure or name, and no [n] marker. Conservative: anything with two content words is a claim.
- UNSUPPORTED, whatever else: it holds a figure (2022, 3.5 %, $1,200: commas, currency and
  percent signs normalised) or a name (a capitalised word inside the sentence, or a word with
  an inner capital or digit such as "Echoserver", "GPT4") that appears in no source.
- SUPPORTED by source n, first: it is one of n's sentences word for word (`QUOTE_MIN_WORDS`,
  6, words or more; spacing, quote marks and the final stop aside), as the extractive answer's
  quotes are. No check below can find less in a source than the source's own sentence.
- SUPPORTED by source n: one sentence of n, or two adjacent ones, says it. Evidence, not shared
  vocabulary: the source window must hold at least `MIN_COVERAGE` (0.65) of the sentence's
  content terms (stemmed), AND the best single source sentence of that window must be close in
  meaning (cosine of the embedder's normalised rows >= `MIN_SIMILARITY`, 0.5; 0.4 when the
  window holds `HIGH_COVERAGE`, 0.8, of the terms); or, for a paraphrase in other words, one
  source sentence is very close in meaning (>= `STRONG_SIMILARITY`, 0.85) and still holds
  `MIN_COVERAGE_STRONG` (0.4) of the terms. Similarity alone is never enough: sentences that
  say something the source does not ("EdgeChat uploads your documents to a server") score
  0.73-0.75 against the sample's privacy paragraph. Without an embedder, 0.8 coverage alone.
  The evidence is the span(s) of those source sentences in `Source.content`.
- UNSUPPORTED otherwise, with the reason a person reads.

Coverage and meaning are not enough for the small words that turn a claim around, so a window
that passes them must also agree with the claim on what `wording` reads from it (`support_rules`): a
denial, a direction, a rank, a "may", the figures and code names, the cause it gives, a period
named by its place, a setting's value, an action one must take, the program it speaks of, and
no run of three claim words the window does not say. Each was added after a wrong sentence was
read as supported in a hand check (docs/results/review_support*.md), each with its test.

Thresholds (MiniLM-L6 cosines; calibrated on 13 true and 9 false sentences about
resources/sample and tests/helpers' corpus): copied and paraphrased sentences scored coverage
0.67-1.0 (similarity 0.45-1.0); on-topic but unsaid ones coverage 0.2-0.63 with similarity up to
0.80 ("Mercury is the largest planet and the farthest from the Sun": 0.6 / 0.80, rejected).
The Echoserver sentence is rejected twice over: the name appears in no source, and without the
name its words reach 0.5 coverage of the welcome page.

Markers: the markers the writer put in a sentence are kept and checked -- one naming a source
that does not support the sentence is a wrong marker. `attribute` then adds "[n]" to a
SUPPORTED sentence that carries no marker or only wrong ones, n its best supporting source,
and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from edgechat.core.answering.citations import MARKER_RE, marker_spans, sentence_spans
from edgechat.core.answering.extractive import COLUMNS, PERIOD_TOKEN_RE
from edgechat.core.answering.support_rules import (
    FORWARD_CAUSE_RE,
    MIN_COVERAGE,
    MIN_SIMILARITY,
    POSSESSIVE_RE,
    STRONG_SIMILARITY,
    Claim,
    SourceIndex,
    accepts,
    index_sources,
    names_what_before,
    names_word,
    row_support,
    said_in,
    source_words,
)
from edgechat.core.answering.wording import (
    _CAP_WORD_RE,
    _CODE_SPAN_RE,
    _COMMENT_RE,
    _FENCE_RE,
    _LIST_ENUM_RE,
    _MODAL_RE,
    _PDF_MARKS,
    _REFERS_BACK_RE,
    _WORD_RE,
    _YEAR_RE,
    _YES_NO_Q_RE,
    _YES_NO_RE,
    COMMENT_WORDS,
    _acronyms,
    _advice_verbs,
    _always_named,
    _calls,
    _cause_terms,
    _claim_terms,
    _code_line_words,
    _counted,
    _dates,
    _directions,
    _furniture,
    _ident_pattern,
    _identifiers,
    _names,
    _names_in,
    _negated,
    _ordinals,
    _providers,
    _quarters,
    _ranks,
    _scales,
    _settings,
    _term_sequence,
    _terms,
    _titles_as_content,
    figures,
    introduces,
    month_spans,
    names_period,
    period_span,
    report_of,
    spans_said,
)
from edgechat.core.records import Evidence, SentenceVerdict, Source, Support
from edgechat.core.search.retrieval import STOPWORDS, stem

__all__ = ["MIN_COVERAGE", "MIN_SIMILARITY", "STRONG_SIMILARITY", "attribute", "invents_a_figure", "verify"]


MIN_CLAIM_TERMS = 2
INTRO_WORDS = 5  # a sentence ending in a colon this short only introduces what follows

Embed = Callable[[list[str]], Any]

_OWN_TEXT: set[str] = set()


_BARE_CAUSE_RE = re.compile(r"^\W*(?:because|(?:primarily |mainly |largely )?(?:due|owing) to|this (?:is|was) "
                            r"(?:primarily |mainly |largely )?(?:due to|because))\b", re.IGNORECASE)
# "why did it change", "compared with": the asking, not what changed
_CHANGE_WORD_RE = re.compile(r"^(?:chang|vari|fluctu|affect|impact|mov|differ|shift|compar|versus|relat)")
_ACCORDING_RE = re.compile(r"^\W*(?:according to|as (?:shown|stated|given) in|based on) (?:the|this) (?:table|note|"
                           r"documents?|sources?|passages?|filing|report|information|context)(?: provided| given| above)?"
                           r",?\s*", re.IGNORECASE)


def register_own_text(*sentences: str) -> None:
    """Fixed sentences EdgeChat itself writes ("not found in your documents"): NO_CLAIM."""
    _OWN_TEXT.update(s.strip() for s in sentences)


@dataclass
class _Check:
    support: Support
    sources: list[int] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    reason: str = ""
    scores: dict[int, tuple[float, float]] = field(default_factory=dict)  # number -> (coverage, similarity)


_WH_RE = re.compile(r"^\W*(?:what|which|where|who|whom|whose|when|how|why)\b", re.IGNORECASE)
_LATEST_RE = re.compile(r"\b(?:latest|most recent|current)\b", re.IGNORECASE)


def _embed_rows(embed: Embed | None, texts: list[str]) -> np.ndarray | None:
    if embed is None or not texts:
        return None
    return np.asarray(embed(texts), dtype=np.float32)


def _opening_name(body: str) -> list[str]:
    """The sentence's first word when it may be a name ("Amazon's ..."); `_names` leaves it out, as
    capitalised for opening the sentence."""
    m = _CAP_WORD_RE.match(body.lstrip())
    word = POSSESSIVE_RE.sub("", m.group()) if m else ""
    return [word] if word and word.lower() not in STOPWORDS else []


def _subjects(names: Sequence[str], index: Sequence[SourceIndex]) -> set[str]:
    """The `names` that name some source's document: its title or file name ("Maxima" for
    maximabook-2004.pdf), or its identity ("Amazon" for AMAZON.COM, INC.'s filing)."""
    return {t for t in names if len(t) >= 3 and any(
        ix.label.startswith(t) or f" {t}" in ix.label or names_word(ix.identity, t) for ix in index)}


def _one(names: set[str]) -> set[str]:
    return names if len(names) == 1 else set()


@dataclass(frozen=True)
class _Asked:
    """What the question says, as the checks use it."""

    years: frozenset[str] = frozenset()  # the years it names ("in Q1 2023")
    dates: frozenset[tuple[str, str]] = frozenset()  # the dates it writes ("the quarter ended July 1, 2023")
    terms: frozenset[str] = frozenset()  # its words, as a claim's terms are counted
    words: frozenset[str] = frozenset()  # its words, as names are looked up
    latest: bool = False  # about the latest period ("the most recent 10-Q")
    wh: bool = False  # what, which, how ...: a sentence that only says it back answers nothing
    why: bool = False  # asks for a cause ("Why did ...?")
    ranks: frozenset[str] = frozenset()  # "the most severe": a claim that says it back is not ranking
    ordinals: frozenset[str] = frozenset()  # "in the third quarter": an answer may say it back
    yes_no: bool = False  # "will R still match it?": answered by yes or no
    text: str = ""  # lower case, spaces collapsed: where code it writes ("like exp(9/4)") is found
    names: frozenset[str] = frozenset()  # the names it gives, lower case, bare ("amazon" for "Amazon's")

    @classmethod
    def of(cls, question: str) -> _Asked:
        if not question:
            return cls()
        return cls(years=frozenset(f for f, _ in figures(question) if _YEAR_RE.fullmatch(f)),
                   dates=frozenset(_dates(question)),
                   terms=frozenset(_claim_terms(question)), words=frozenset(source_words(question, "")),
                   latest=bool(_LATEST_RE.search(question)), wh=bool(_WH_RE.match(question)),
                   why=bool(re.match(r"^\W*why\b", question, re.IGNORECASE)),
                   ranks=frozenset(_ranks(question)), ordinals=frozenset(_ordinals(question)),
                   yes_no=bool(_YES_NO_Q_RE.match(question)), text=" ".join(question.lower().split()),
                   names=frozenset(POSSESSIVE_RE.sub("", n).lower() for n in [*_names(question), *_opening_name(question)]))

    def writes(self, code: str) -> bool:
        """Does the question itself write this piece of code ("exp(9/4)", or the call "exp")?"""
        code = " ".join(code.lower().split())
        return bool(self.text) and (code in self.text if not code.isidentifier() else f"{code}(" in self.text)


def _check(sentence: str, vec: np.ndarray | None, index: list[SourceIndex], question: str = "",
           before: Sequence[str] = (), asked: _Asked = _Asked(),
           context: frozenset[str] = frozenset(), joined: bool = False) -> _Check:  # fmt: skip
    """`question`: given for a bare phrase, whose words are checked together with the question's.
    `before`: the code names of the claim before this one, when this one refers back to it ("This
    command ..."): its evidence must speak of one of them. `asked`: the question, always; the
    years it names ("in Q1 2023") are the period asked about when the answer repeats them, not a
    figure of its own, and a table's columns name the period in their own way ("December 31,
    2022"). `context`: the words of the claim before, to choose between two sentences that say it.
    `joined`: the sentence goes on the line of the one before (a quote on a line of its own stands
    alone).

    In turn: what claims nothing; a source's own sentence, quoted; what no source can bear out (a
    period not asked about, a figure, name or piece of code no source has); then the search of the
    sources' windows for one that says it."""
    clean = MARKER_RE.sub(" ", sentence).strip()
    if clean in _OWN_TEXT:
        return _Check(Support.NO_CLAIM)
    if clean.startswith(f"{COLUMNS} "):
        # A quoted row's column headings, in EdgeChat's words: no claim, and its marker says where
        # they are from (not a citation the source fails to bear out).
        cited = {n for _, _, nums in marker_spans(sentence) for n in nums}
        return _Check(Support.NO_CLAIM, sources=sorted(cited & {ix.source.ordinal for ix in index}))
    # read as the sources are read: "Don’t" is "Don't", or its denial goes unseen
    body = _LIST_ENUM_RE.sub("", clean.translate(_PDF_MARKS))
    # "According to the table, Amazon held 34,170 ...": where the writer read it, not part of the claim
    body = _ACCORDING_RE.sub("", body) or body
    if _states_nothing(body, index):
        return _Check(Support.NO_CLAIM)
    # The question's own years and dates, said back, are the period asked about, not figures to find
    asked_days = {day for month_day in _dates(body) & asked.dates for day in month_day[1:]}
    figs = [(n, w) for n, w in figures(body) if n not in asked.years and n not in asked_days]
    names = _names(body)
    terms = _claim_terms(body) - asked.years
    if question and _terms(body):  # a phrase with words of its own, read with its question
        terms |= _claim_terms(question)
    if len(terms) < MIN_CLAIM_TERMS and not figs and not names and not MARKER_RE.search(sentence):
        return _Check(Support.NO_CLAIM)  # a sentence that cites a source claims something
    if _says_the_question_back(body, terms, figs, question, asked, index):
        return _Check(Support.NO_CLAIM, reason="says only what the question asks")
    quoted = _quoted_sentence(body, index)
    if quoted is not None and joined and before and _REFERS_BACK_RE.match(body):
        # A source's own sentence says what it says; but "This file ..." run on after "Edit
        # `resolv.conf`" says it of resolv.conf, and that is checked in the search.
        ix = next(ix for ix in index if ix.source.ordinal == quoted[0])
        if not names_what_before(ix, quoted[1], ix.sentence_texts[quoted[1]].lower(), before):
            quoted = None
    if quoted is not None:
        number, j = quoted
        ix = next(ix for ix in index if ix.source.ordinal == number)
        return _Check(Support.SUPPORTED, sources=[number], evidence=[Evidence(number, *ix.spans[j])])
    # Code the question writes, said back ("to get a decimal instead of exp(9/4), use float"): the
    # question's, not a claim to find in the sources.
    idents = [i for i in _identifiers(body) if not asked.writes(i)]
    calls = [c for c in _calls(body) if not asked.writes(c)]
    reason = (_other_period(body, figs, asked)
              or _not_in_sources(body, figs, names, idents, calls, asked, index))
    if reason:
        return _Check(Support.UNSUPPORTED, reason=reason)
    if not terms:
        terms = _terms(body)
    if not terms:  # a marker with nothing to check beside it ("[2].", "( ) [1]")
        return _Check(Support.NO_CLAIM)
    if not index:
        return _Check(Support.UNSUPPORTED, reason="there are no sources")
    claim = _claim_of(body, terms, figs, names, idents, calls, question, before, asked, index)
    return _search(claim, figs, vec, index, asked, context)


def _states_nothing(body: str, index: list[SourceIndex]) -> bool:
    """A fence, a comment or heading that names a step, an introduction ("Run this command:"),
    page furniture, a bare list number, or a source's own name: nothing to check."""
    if _FENCE_RE.match(body) or (_COMMENT_RE.match(body) and len(body.split()) <= COMMENT_WORDS + 1):
        return True
    if introduces(body) and len(body.split()) <= INTRO_WORDS and not figures(body) and not _identifiers(body):
        return True  # "In this modified script:", "Run this command:"
    if _furniture(body):
        return True
    if not re.search(r"[^\W\d_]", body) and re.fullmatch(r"\W*\d{0,2}\W*", body):
        return True  # "2 [1].": a number left of a list, nothing said
    # "1. [1]: Debian Developer's Reference": a source's name
    return bool(index) and any(_terms(body) and _terms(body) <= ix.label_terms for ix in index)


def _says_the_question_back(body: str, terms: set[str], figs: list[tuple[str, str]], question: str,
                            asked: _Asked, index: list[SourceIndex]) -> bool:
    """"The Asymptote module provides Circle for drawing a true circle" to "Which Asymptote module
    provides Circle ...?": the question said back, with nothing that answers it. Not when it names
    code ("use the `continue` command" names an answer) or is a document's own sentence, quoted."""
    return bool(asked.wh and not question and terms and {t for t in terms if not t.isdigit()} <= asked.terms
                and not figs and not _identifiers(body) and not _calls(body)
                and not any(" ".join(body.lower().split()).rstrip(".") in " ".join(ix.haystack.split())
                            for ix in index))


def _other_period(body: str, figs: list[tuple[str, str]], asked: _Asked) -> str:
    """Why the sentence speaks of another period than the one asked about; "" when it does not."""
    said_years = {f for f, _ in figures(body) if _YEAR_RE.fullmatch(f)}
    if asked.years and said_years and not said_years & asked.years and not _dates(body):
        # "Amazon expects cash capital expenditures to decrease in 2023" to "... expect for 2024?":
        # true of another year, and no answer to this one. (A date, "the quarter ended December
        # 31, 2022", may be how a fiscal year's quarter is named.)
        return f"it speaks of {' and '.join(sorted(said_years))}, not of {' or '.join(sorted(asked.years))} as asked"
    asked_span, said_spans = period_span(asked.text), spans_said(body)
    if figs and asked_span and said_spans and asked_span not in said_spans:
        # "The Company's quarterly cash dividend was $0.24 per share" to "How much did Apple pay in
        # dividends in the nine months ended July 1, 2023?": a figure of another length of period
        return f"it gives a figure for {' or '.join(sorted(said_spans))} months, not for the {asked_span} months asked about"
    return ""


def _not_in_sources(body: str, figs: list[tuple[str, str]], names: list[str], idents: list[str],
                    calls: list[str], asked: _Asked, index: list[SourceIndex]) -> str:
    """Why no source can bear the sentence out: a figure, a counted thing, a name or a piece of
    code that none has, or a comment on the answer before in words none uses; "" otherwise."""
    all_figures = set().union(*(ix.figures for ix in index)) if index else set()
    for norm, written in figs:
        if norm not in all_figures:
            return _INVENTED.format(written)
    for counted in _counted(body) - asked.terms:
        if not any(counted in ix.words for ix in index):
            return f"no source counts {counted} (a figure said with what it counts)"
    for ident in idents:
        if not any(_ident_pattern(ident).search(ix.haystack) for ix in index):
            return f"the name {ident} appears in no source"
    for call in calls:
        if not any(_names_in(ix.haystack, (), [call]) for ix in index):
            return f"the function {call}() appears in no source"
    all_words = set().union(*(ix.words for ix in index)) if index else set()
    for name in names:
        bare = POSSESSIVE_RE.sub("", name).lower()  # "Apple's" is Apple, whichever apostrophe
        if bare not in all_words and stem(bare) not in all_words and not (
                ("_" in bare or "-" in bare)  # FIT_LOG, Sarbanes-Oxley, C-x: as written
                and any(_ident_pattern(bare).search(ix.haystack) for ix in index)):
            return f"the name {name} appears in no source"
    if _REFERS_BACK_RE.match(body) and index:
        # "This reflects the company's ability to ...", "This will ... close the Octave session": a
        # sentence about something the answer said before, in a word no source uses, is the
        # writer's own reading of it
        said = set().union(*(t for ix in index for t in ix.terms), *(ix.label_terms for ix in index))
        novel = _claim_terms(body) - said - asked.terms
        if novel:
            word = next((w for w in _WORD_RE.findall(body) if _claim_terms(w) & novel), "")
            return f"it comments on what the answer said before, in words no source uses (\"{word}\")"
    return ""


def _claim_of(body: str, terms: set[str], figs: list[tuple[str, str]], names: list[str], idents: list[str],
              calls: list[str], question: str, before: Sequence[str], asked: _Asked,
              index: list[SourceIndex]) -> Claim:  # fmt: skip
    """What the sentence `body` claims, as `accepts` judges the sources' windows against it: the
    question's own words, years and names left out of what the evidence must say."""
    labels = [ix.label for ix in index]
    titles = [ix.source.title or "" for ix in index]
    bare_cause = bool(_BARE_CAUSE_RE.match(body))  # "Because ...": a cause with no subject of its own
    return Claim(
        body=body, terms=terms, figures={norm for norm, _ in figs}, idents=idents, calls=calls,
        negated=_negated(body), ways=_directions(body),
        # Names the claim gives that the question does not: the evidence must give them too.
        own_names={b for b in (POSSESSIVE_RE.sub("", n).lower() for n in names)
                   if b not in asked.words and stem(b) not in asked.words}
                  | _always_named(_CODE_SPAN_RE.sub(lambda m: " " if asked.writes(m.group(1)) else m.group(0), body)),
        restated=(terms & asked.terms) - asked.years if not question else set(),
        fragment=bool(question), ranks=_ranks(body) - asked.ranks, certain=not _MODAL_RE.search(body),
        echoes=[i for i in idents if i.isalpha() and stem(i) in asked.terms],
        code=bool(_CODE_SPAN_RE.search(body)),
        before=before if before and _REFERS_BACK_RE.match(body) else (),
        cause=_cause_terms(body), settings=_settings(body), advice=_advice_verbs(body),
        scales={f: sc for f, sc in _scales(body).items() if f in {norm for norm, _ in figs}},
        years={*asked.years, *(f for f, _ in figures(body) if _YEAR_RE.fullmatch(f))}, latest=asked.latest,
        span=period_span(body) or period_span(asked.text),
        sequence=[t for t in _term_sequence(body) if t not in asked.terms],
        # a name that is the name of some source's document (maximabook-2004.pdf: "Maxima"): the
        # evidence must come from that document or say the name
        subjects=_subjects([POSSESSIVE_RE.sub("", n).lower() for n in [*names, *_opening_name(body)]], index)
        # "Dividend per share paid in 2023 was 0.23" to "What dividend did Amazon pay?": of Amazon
        or _one(_subjects(sorted(asked.names), index)),
        acronyms=_acronyms(body),
        providers=_providers(body, labels) - _providers(asked.text, labels),
        titles=_titles_as_content(body, titles) - _titles_as_content(question, titles),
        code_words=_code_line_words(body),
        says_back=asked.yes_no and bool(_YES_NO_RE.match(body)) and terms - asked.terms <= {"yes", "no"},
        ordinals=_ordinals(body) - asked.ordinals,
        counted=_counted(body) - asked.terms,
        spans=month_spans(body) - month_spans(asked.text),
        bare_cause=bare_cause and (asked.why or bool(_directions(asked.text))),
        asked_ways=_directions(asked.text),
        asked_subject={t for t in asked.terms - asked.years if not PERIOD_TOKEN_RE.match(t)
                       and not _directions(t) and not _CHANGE_WORD_RE.match(t)} if bare_cause else set(),
        forward_cause=bool(FORWARD_CAUSE_RE.search(body)),
        # a bare phrase, or a bare cause ("Because ...") answering "Why did Mac net sales ...?": about
        # what the question names
        asked_names={n for n in asked.names if not PERIOD_TOKEN_RE.match(n)} if question or bare_cause else set(),
    )


def _search(claim: Claim, figs: list[tuple[str, str]], vec: np.ndarray | None, index: list[SourceIndex],
            asked: _Asked, context: frozenset[str]) -> _Check:  # fmt: skip
    """Every source's windows of one or two sentences judged against `claim`: SUPPORTED by the
    sources whose best window says it (best first), else UNSUPPORTED with the reason closest to
    the truth ("... but not with the figure(s) ..."). `figs`: the claim's figures as written."""
    body, terms, idents, calls = claim.body, claim.terms, claim.idents, claim.calls
    figures_apart = False  # some source says it, but not with its figures
    asked_apart = False  # ... or not of what the question names
    period_apart = False  # ... or of another length of period
    names_apart = False  # ... or not where it names the code names the claim gives
    found: list[tuple[float, int, list[int]]] = []  # (score, number, sentence indices)
    scores: dict[int, tuple[float, float]] = {}
    # The quarter the claim is about (or the question's, when the claim names none): in a document
    # whose name says it is another quarter's report, the evidence must name that quarter itself
    # (a Q3 report's "compared with $2.7 billion in fourth quarter 2022"); its table rows are its
    # own quarter's ("2023 Q2 AAPL.pdf" for "iPhone revenue in Q1 2023").
    period = body if _quarters(body) else asked.text
    for ix in index:
        report = report_of(period, ix.label)
        sims = (ix.vecs @ vec) if (vec is not None and ix.vecs is not None and len(ix.vecs)) else None
        best: tuple[float, list[int]] | None = None
        best_cov, best_sim = 0.0, 0.0
        for i in range(len(ix.spans)):
            # One source sentence for a phrase read with the question, and for a claim that writes
            # code or refers back: the sentence that says it must name it.
            single = claim.fragment or claim.idents or claim.calls or claim.before or claim.code or claim.settings
            for window in (([i],) if single else ([i], [i, i + 1])):
                if window[-1] >= len(ix.spans) or all(ix.furniture[j] for j in window):
                    continue  # past the end; "gnuplot 5.4 99": a running footer says nothing
                covered = set().union(ix.label_terms, *(ix.terms[j] for j in window))
                cov = len(terms & covered) / len(terms)
                sim = max(float(sims[j]) for j in window) if sims is not None else 0.0
                best_cov, best_sim = max(best_cov, cov), max(best_sim, sim)
                ok, apart = accepts(claim, ix, window, covered, cov, sim if sims is not None else None)
                figures_apart |= apart == "figures"
                asked_apart |= apart == "asked"
                period_apart |= apart == "period"
                names_apart |= apart == "names"
                if ok:
                    score = cov + sim - 0.05 * (len(window) - 1)  # one sentence beats a pair
                    if context:  # of two that say it, the one about what the claim before spoke of
                        score += 0.3 * len(context & covered) / len(context)
                    if best is None or score > best[0]:
                        best = (score, window)
        # Another quarter's report supports what its evidence says of this quarter by name; a later
        # year's report, also the column of this quarter's year in a table row.
        if best is not None and report != "same" and not names_period(period, said_in(ix, best[1])):
            best = None
        if best is None and any(not _YEAR_RE.fullmatch(f) for f in claim.figures) and not (
                idents or calls or claim.negated):
            row = row_support(ix, claim, terms, set(asked.terms), told=report == "later")
            if row is not None and (report != "other" or names_period(period, said_in(ix, row))):
                best = (1.0 + best_sim, row)
        scores[ix.source.ordinal] = (round(best_cov, 3), round(best_sim, 3))
        if best is not None:
            found.append((best[0], ix.source.ordinal, best[1]))
    if not found and figures_apart:
        written = ", ".join(w for _, w in figs)
        return _Check(Support.UNSUPPORTED, scores=scores,
                      reason=f"the sources say it, but not with the figure(s) {written} in the same place")
    if not found and asked_apart:
        # the question's names that no document is named by ("Mac", not "Apple")
        missing = [n for n in sorted(claim.asked_names) if not any(n in f"{ix.label} {ix.identity}" for ix in index)]
        named = " and ".join(f"\u201c{n}\u201d" for n in missing or sorted(claim.asked_names))
        return _Check(Support.UNSUPPORTED, scores=scores, reason=f"the sources say it, but not of {named}, as asked")
    if not found and period_apart:
        return _Check(Support.UNSUPPORTED, scores=scores,
                      reason=f"the sources say it, but not of {' or '.join(sorted(claim.spans))} months")
    if not found and names_apart:
        named = ", ".join([*idents, *(f"{c}()" for c in calls)]) or "what the sentence before named"
        return _Check(Support.UNSUPPORTED, scores=scores,
                      reason=f"the sources say something like it, but not where they name {named}")
    if not found:
        top = max(scores.items(), key=lambda kv: kv[1][0] + kv[1][1])
        return _Check(Support.UNSUPPORTED, scores=scores,
                      reason=f"no source says it (closest: source {top[0]}, {round(100 * top[1][0])} % of its "
                             f"words, similarity {top[1][1]:.2f})")
    found.sort(key=lambda f: -f[0])
    by_number = {ix.source.ordinal: ix for ix in index}
    evidence = []
    for _, number, window in found:
        ix = by_number[number]
        evidence += [Evidence(number, *ix.spans[j]) for j in window]
    return _Check(Support.SUPPORTED, sources=[n for _, n, _ in found], evidence=evidence, scores=scores)


QUOTE_MIN_WORDS = 6  # shorter sentences are checked as claims even when a source says them whole


def _quoted_sentence(body: str, index: list[SourceIndex]) -> tuple[int, int] | None:
    """(source number, sentence index) of a source sentence that `body` repeats word for word
    (spacing, quotes and a final stop aside), best-ranked source first; None if none does."""
    said = _squash(body)
    if len(said.split()) < QUOTE_MIN_WORDS:
        return None
    for ix in index:
        for j, text in enumerate(ix.sentence_texts):
            if not ix.furniture[j] and _squash(text) == said:
                return ix.source.ordinal, j
    return None


def _squash(text: str) -> str:
    return " ".join(text.translate(_PDF_MARKS).split()).rstrip(" .:;").lower()


def _is_fragment(sentence: str) -> bool:
    """A bare phrase ("LD_LIBRARY_PATH [4]", "Wishlist severity."): an answer only read with its
    question."""
    body = _LIST_ENUM_RE.sub("", MARKER_RE.sub(" ", sentence)).strip()
    if introduces(body) or _FENCE_RE.match(body):
        return False  # "For example:" introduces; "```bash" formats
    words = len(body.split())
    if not body or _ENDS_CLAUSE_RE.search(body):
        return False
    # A short phrase, or a noun phrase a little longer ("the environment variable R_MAKEVARS_USER"):
    # the answer's name for something, true of the source whatever the question was.
    return words <= FRAGMENT_WORDS or (words <= NOUN_PHRASE_WORDS and bool(_NOUN_PHRASE_RE.match(body)))


FRAGMENT_WORDS = 3
NOUN_PHRASE_WORDS = 6
_NOUN_PHRASE_RE = re.compile(r"^\W*(?:the|a|an)\b", re.IGNORECASE)
_ENDS_CLAUSE_RE = re.compile(r"\b(?:is|are|was|were|has|have|does|do)\b", re.IGNORECASE)


_INVENTED = "the figure {} appears in no source"


def invents_a_figure(verdict: SentenceVerdict) -> bool:
    """Does the sentence give a figure no source has ("= $6.5 billion", worked out by the writer)?"""
    head, tail = _INVENTED.split("{}")
    return verdict.support == Support.UNSUPPORTED and verdict.reason.startswith(head) and verdict.reason.endswith(tail)


def verify(
    text: str, sources: Sequence[Source], embed: Embed | None = None, question: str = ""
) -> list[SentenceVerdict]:
    """One verdict per sentence of `text` (spans in `text`). Markers are read, never changed.

    With the `question`, a bare phrase of the answer ("LD_LIBRARY_PATH [4]") is checked as the
    answer to it: the question's words and the phrase must be said together in a source (the
    variable named in a source is not the one the question asks about)."""
    if not text:
        return []
    spans = sentence_spans(text)
    index = index_sources(sources)
    source_texts = [MARKER_RE.sub(" ", ix.source.content[s:e]) for ix in index for s, e in ix.spans]
    sentence_texts = [MARKER_RE.sub(" ", text[s:e]) for s, e in spans]
    if question:
        sentence_texts = [(f"{question} {t}" if _is_fragment(t) else t) for t in sentence_texts]
    rows = _embed_rows(embed, source_texts + sentence_texts)
    if rows is not None:
        at = 0
        for ix in index:
            ix.vecs = rows[at : at + len(ix.spans)]
            at += len(ix.spans)
    markers = marker_spans(text)
    named = {s.ordinal for s in sources}
    asked = _Asked.of(question)
    out = []
    before: list[str] = []  # the code names of the last claim sentence
    context: frozenset[str] = frozenset()  # ... and its words
    for k, (s, e) in enumerate(spans):
        vec = rows[len(source_texts) + k] if rows is not None else None
        joined = k > 0 and "\n" not in text[spans[k - 1][1]:s]
        check = _check(text[s:e], vec, index, question if question and _is_fragment(text[s:e]) else "", before,
                       asked, context, joined)
        if check.support != Support.NO_CLAIM:
            body = MARKER_RE.sub(" ", text[s:e])
            before = _identifiers(body) + _calls(body)
            context = frozenset(_claim_terms(body))
        written = list(dict.fromkeys(n for ms, me, nums in markers if s <= ms < e for n in nums))
        missing = [n for n in written if n not in named]
        if check.support == Support.SUPPORTED and 2 * len(missing) > len(written):
            # "Save [3] gnuplot documentation [4] ... [25]": a writer citing sources it was never
            # given is not quoting them
            check = _Check(Support.UNSUPPORTED, reason="it cites sources that do not exist: "
                                                        + ", ".join(f"[{n}]" for n in missing[:3])
                                                        + (" ..." if len(missing) > 3 else ""))
        wrong = [n for n in written if n not in named or n not in check.sources]
        out.append(SentenceVerdict(start=s, end=e, support=check.support, sources=check.sources,
                                   evidence=check.evidence, markers_written=written, wrong_markers=wrong,
                                   reason=check.reason))
    return out


_END = re.compile(r"[.!?\u2026:;]+[\"'\u201d\u2019)\]]*$")


def attribute(text: str, verdicts: Sequence[SentenceVerdict]) -> tuple[str, list[SentenceVerdict], list[tuple[int, int]]]:
    """Add " [n]" before the final punctuation of every SUPPORTED sentence that carries no
    marker, or only wrong ones (the writer's [3] where source 1 says it: the [3] stays, marked
    wrong, and [1] is added), n its best supporting source; nowhere else. Returns the new text,
    the verdicts with their spans moved to it and `markers_added` filled in, and the spans of
    the added markers."""
    inserts: list[tuple[int, str, int]] = []  # (position, marker, verdict index)
    for k, v in enumerate(verdicts):
        right = [n for n in v.markers_written if n not in v.wrong_markers]
        if v.support != Support.SUPPORTED or right or not v.sources:
            continue
        sentence = text[v.start : v.end]
        m = _END.search(sentence)
        inserts.append((v.start + (m.start() if m else len(sentence)), f" [{v.sources[0]}]", k))
    if not inserts:
        return text, list(verdicts), []
    inserts.sort()
    out = text
    for at, marker, _ in reversed(inserts):
        out = out[:at] + marker + out[at:]

    def moved(pos: int, inclusive: bool) -> int:
        return pos + sum(len(mk) for at, mk, _ in inserts if at < pos or (inclusive and at == pos))

    spans = []
    shift = 0
    for at, marker, _ in inserts:
        spans.append((at + shift + 1, at + shift + len(marker)))
        shift += len(marker)
    added = {k: verdicts[k].sources[0] for _, _, k in inserts}
    result = []
    for k, v in enumerate(verdicts):
        result.append(replace(v, start=moved(v.start, False), end=moved(v.end, True),
                              markers_added=[added[k]] if k in added else []))
    return out, result, spans
