"""Question -> processed query (edgechat.core.search.pipeline) -> is anything relevant? (if not:
"not in your documents" and the closest quotes, no model call) -> prompt of each source's
sentences about the question (focus.py) under a token budget ->
streamed answer -> every sentence checked against the sources (verify.py), markers supplied to
supported sentences -> withheld when mostly unsupported -> citations (citations.py).

Relevance. The best candidate's vector cosine is the signal that carries over between
libraries (the fused hybrid score is relative to the query's own candidates: it was 0.70-0.87 for
every question, relevant or not). Over resources/sample and tests/helpers' corpus, 13 relevant
questions scored 0.38-0.76 (one exception, "What is the Great Red Spot?", 0.14: MiniLM misses
it, but every one of its words is in the Jupiter passage) and 12 questions about things absent
from the library 0.02-0.13 (one, "What is the price of EdgeChat Pro?", 0.38: it names the app).
So nothing is relevant when the cosine is under `MIN_RELEVANT_COSINE` (0.25, between the groups)
AND no candidate holds `MIN_KEYWORD_COVERAGE` (2/3) of the question's content words.

Missing subjects. A question about something the library never mentions ("What learning rate
does xgboost use?" over the Debian manuals) still finds passages that look close (cosine 0.35-0.64
for 17 such questions, against 0.50-0.83 for 45 answerable ones). What gives it away is a name or term of
art in the question (not an everyday word: not one whole token of the embedder's 30,000-word
vocabulary, or capitalised inside the question) that no passage contains (FTS5's stemmed match, `Store.passages_with`): 14 of the 17
had one, and of 126 answerable questions (Debian and 10-Q filings) none did once words about the
asking ("analyze", "latest", "mentioned": `ASKING_WORDS`, not looked up) are set aside and one side
of an "A or B" is enough ("acquisitions or divestitures"). So nothing is relevant when a subject
word is in no passage AND the best cosine is under `MAX_COSINE_WITH_MISSING` (0.6): a strong
match elsewhere means the word is likely a paraphrase. The answer names the word.

Withholding. A written answer is not shown as written when fewer than half of its claim sentences
are supported (`support_ratio` < 0.5) or when its first claim sentence is unsupported: the first
sentence is what a reader takes as the answer (the Echoserver opening line was the answer's
headline), so a wrong one is not rescued by true sentences after it. With a supported first
claim, only the supported sentences are shown, in order, and the whole text is kept as the
unverified `draft`; with an unsupported first claim the answer is withheld ("The model's answer is not
shown", the closest passages, the draft). On the Debian questions with Qwen2.5-Coder-0.5B,
withholding every such answer threw away 13 drafts that held the right fact out of 29; showing
the supported sentences whatever the first claim showed fragments that did not answer the
question for 2 of 17 questions the library cannot answer. An answer that passes can still hold an
unsupported sentence later on: its verdict says so (the window marks it), and it is not
`grounded`.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

import types

from edgechat.core.answering.citations import MARKER_RE, build_citations
from edgechat.core.answering.extractive import (
    COLUMNS,
    ExtractiveClient,
    amount_row,
    amount_terms,
    asked_rows,
    asks_for_figure,
    column_line,
    document_names,
    of_the_report,
    row_search_words,
    unfound_amounts,
)
from edgechat.core.answering.focus import focus
from edgechat.core.answering.history import ReducedHistory
from edgechat.core.answering.verify import attribute, introduces, invents_a_figure, register_own_text, verify
from edgechat.core.answering.wording import _YEAR_RE, figures
from edgechat.core.llm.client import ChatClient
from edgechat.core.search.retrieval import keywords_of, stem
from edgechat.core.search.pipeline import RagPipeline
from edgechat.core.answering.prompt import DONT_KNOW, fit_messages
from edgechat.core.records import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatUpdate,
    ClientKind,
    ProcessedQuery,
    RagRequest,
    Scope,
    SentenceVerdict,
    Source,
    StopReason,
    Support,
    support_ratio,
)

NOTHING_FOUND = "Nothing in your library matched this question, so there is nothing to cite."
NO_SEARCH_EXTRACTIVE = (
    "That doesn't look like a question about your documents, so nothing was searched. "
    "Without a language model EdgeChat can only answer from your documents: ask about them."
)
NOT_IN_DOCUMENTS = "Your documents don't say: nothing in them is close enough to this question."
# The model wrote an answer its sources do not support. Not "not found": the closest passages shown
# under it often do answer the question.
WITHHELD = "The model's answer is not shown: your documents do not support what it wrote."
CLOSEST = "The closest passages:"
MAX_EXTRA_ROWS = 2  # passages added for amounts the question compares and the sources have no row for
ROW_SEARCH_RESULTS = 20  # passages of the document searched for such a row
ROW_FIRST = "The table row that matches the question, then the closest passages:"
ROWS_FIRST = "The table rows that match the question, then the closest passages:"
MODEL_FOUND_NONE = ("Your documents don't seem to say: the model found no answer in the passages closest "
                    "to this question.")
NO_FIGURE = "The model's answer is not shown: it gives no figure for the amount you asked about."
OTHER_AMOUNT = "The model's answer is not shown: its figure is not of the amount you asked about."
register_own_text(NOTHING_FOUND, NOT_IN_DOCUMENTS, WITHHELD, CLOSEST, MODEL_FOUND_NONE, DONT_KNOW,
                  ROW_FIRST, ROWS_FIRST, NO_FIGURE, OTHER_AMOUNT)
# The model saying it cannot answer, in the prompt's words (DONT_KNOW) or its own.
_DONT_KNOW_RE = re.compile(
    r"\b(?:do not|don't|cannot|can't|can not) (?:know|answer|find|determine|tell)\b"
    r"|\b(?:does not|doesn't|do not|don't) (?:say|contain|mention|provide|include|specify|state)\b"
    r"|\bnot (?:mentioned|provided|stated|specified|found|available) in\b"
    r"|\bno (?:information|mention|answer)\b",
    re.IGNORECASE,
)

MIN_RELEVANT_COSINE = 0.25
MIN_KEYWORD_COVERAGE = 2 / 3
MAX_COSINE_WITH_MISSING = 0.6
#: Words about the asking, not the subject: a question can use them although no document does.
ASKING_WORDS = frozenset(
    """analyse analyze analysed analyzed assess breakdown compare compared comparison correlate
    correlated correlates correlation describe detail details discuss discussed effect effects
    examine explain happen happened identify impact impacts implication implications insight insights
    latest list main major mention mentioned mentions notable noted overall please primary recent
    relationship show significant significantly specific specifically suggest suggests summarise
    summarize tell trend trends way ways""".split()
)
MIN_SUPPORT_RATIO = 0.5
MAX_QUOTES_SOURCES = 3


_ALTERNATIVES_RE = re.compile(r"(\w+),? or (?:an? |the |any )?(\w+)")


def subject_words(question: str, is_common: Callable[[str], bool] = lambda w: False) -> list[str]:
    """The question's words that name what it is about: content words of 3+ letters, without
    digits, not `ASKING_WORDS`, and either not common (`is_common`: a whole word of the
    embedder's vocabulary) or written as a name (capitalised after the first word: "Sway")."""
    names = {m.group().lower() for m in re.finditer(r"(?<=\s)[A-Z]\w*", question)}
    return [w for w in keywords_of(question)
            if len(w) >= 3 and w.isalpha() and w not in ASKING_WORDS and (w in names or not is_common(w))]


def relevance(
    pq: ProcessedQuery,
    sources: Sequence[Source],
    passages_with: Callable[[list[str]], dict[str, int]] | None = None,
    is_common: Callable[[str], bool] = lambda w: False,
) -> dict[str, Any]:
    """Is anything retrieved relevant to the question? See the module docstring.
    `passages_with` (the store's) counts the passages holding each word; without it the
    missing-subject check is skipped. `is_common` tells an everyday word ("long", which a small
    library may well never use) from a name or a term of art ("xgboost")."""
    question = pq.rewritten_query or pq.original_query
    cosine = max((c.vector_score or 0.0 for c in pq.raw_candidates), default=0.0)
    words = {stem(w) for w in keywords_of(question)}
    coverage = 0.0
    if words:
        for src in sources:
            have = {stem(w) for w in keywords_of(src.content)}
            coverage = max(coverage, len(words & have) / len(words))
    missing: list[str] = []
    if passages_with is not None and sources and cosine < MAX_COSINE_WITH_MISSING:
        # The original wording: a rewrite may add words of its own.
        counts = passages_with(subject_words(pq.original_query, is_common))
        missing = [w for w, n in counts.items() if n == 0]
        # "acquisitions or divestitures": one alternative the library has is enough.
        for a, b in _ALTERNATIVES_RE.findall(pq.original_query.lower()):
            if counts.get(a, 1) > 0 or counts.get(b, 1) > 0:
                missing = [w for w in missing if w not in (a, b)]
    relevant = (bool(sources) and not missing
                and (cosine >= MIN_RELEVANT_COSINE or coverage >= MIN_KEYWORD_COVERAGE))
    return {"relevant": relevant, "best_vector_cosine": round(float(cosine), 4),
            "keyword_coverage": round(coverage, 3), "missing_words": missing}


def missing_sentence(words: Sequence[str]) -> str:
    """The sentence that names the question's words no passage contains."""
    quoted = ", ".join(f"\u201c{w}\u201d" for w in words)
    return f"No passage in your library mentions {quoted}." if len(words) == 1 else \
        f"No passage in your library mentions any of {quoted}."


def says_it_does_not_know(text: str, verdicts: Sequence[SentenceVerdict]) -> bool:
    """Did the model answer that it cannot answer ("I do not know based on the documents.")?
    Only when it claims nothing the sources support: "X is not mentioned, but Y is Z [1]" is
    an answer."""
    if not _DONT_KNOW_RE.search(text):
        return False
    return not any(v.support == Support.SUPPORTED for v in verdicts)


# "How much did Apple pay in dividends?", "What was Amazon's net income in Q2 2023?": an amount
# asked for outright (not its drivers, its change or how it compares; not "what is the default value").
_ASKS_AMOUNT_RE = re.compile(
    r"^\W*(?:how (?:much|many)\b|what (?:was|were)\b(?!.*\b(?:drivers?|reasons?|causes?|factors?|why|how|"
    r"change[sd]?|compare[sd]?|trends?|affect(?:ed)?|impact(?:ed)?|relat\w*)\b))", re.IGNORECASE)


_COUNT_WORD_RE = re.compile(
    r"\b(?:zero|none|no|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?|millions?|billions?|dozens?|single|once|twice|half)\b",
    re.IGNORECASE)


# Words of a count that count nothing: a table's unit ("(in millions)") and its period's heading
# ("Three Months Ended").
_NOT_A_COUNT_RE = re.compile(
    r"\((?:dollars |amounts )?in (?:hundreds|thousands|millions|billions)\b[^)]*\)|\bin (?:thousands|millions|billions)\b"
    r"|\b(?:three|six|nine|twelve) months ended\b", re.IGNORECASE)


def gives_no_figure(question: str, text: str) -> bool:
    """Is `text` an answer without any figure to a question that asks for an amount outright ("Apple
    paid in dividends in Q3 2023." for "How much did Apple pay in dividends in Q3 2023?")? The
    question's own years and figures do not count."""
    if not (_ASKS_AMOUNT_RE.search(question) and asks_for_figure(question)):
        return False
    asked = {f for f, _ in figures(question)}
    text = _NOT_A_COUNT_RE.sub(" ", MARKER_RE.sub(" ", text))
    if _COUNT_WORD_RE.search(text):  # "thirty days", "no restrictions"
        return False
    return not any(f not in asked and not _YEAR_RE.fullmatch(f) for f, _ in figures(text))


_MONEY = r"[$\u20ac\u00a3\u00a5]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:thousand|million|billion|trillion)\b)?"
_MONEY_RE = re.compile(_MONEY, re.IGNORECASE)
# "$2.9 billion and $2.7 billion of unearned revenue as of ...": figures that say what they are of.
_FIGURES_OF_RE = re.compile(
    rf"{_MONEY}(?:\s*(?:,\s*and|,|and|or)\s*{_MONEY})*\s+of\s+(?!which\b|whom\b|the\s+[$\d])"
    r"((?:[A-Za-z][\w'-]*\s*){1,6}?)(?=\s*(?:\bas of\b|\b(?:in|for|during|at|was|were|from|on)\b|\band\s+[$\d]|[.;:\[(]|,\s|$))",
    re.IGNORECASE)


def _what_figures_are_of(text: str) -> str:
    """The words that say what `text`'s amounts are of: when every amount is given as "<amount>
    of <what>", only the <what>s (the model's "total liabilities were $2.9 billion and $2.7
    billion of unearned revenue" is about unearned revenue, whatever it calls it first); else
    the whole text."""
    spans = [(m.start(), m.end(), m.group(1)) for m in _FIGURES_OF_RE.finditer(text)]
    amounts = [m.start() for m in _MONEY_RE.finditer(text)]
    if not spans or not all(any(lo <= a < hi for lo, hi, _ in spans) for a in amounts):
        return text
    return " ".join(what for _, _, what in spans)


def misses_the_amount(question: str, text: str, sources: Sequence[Source] = ()) -> bool:
    """Is `text` a figure of something else than the amount `question` asks for outright ("Apple
    paid 365 million shares of its common stock" to "How much did Apple pay for property, plant and
    equipment?"): it names none of what the amount is of? The company whose documents `sources`
    are (Apple, by their names or identity) is not what the amount is of; a product (iPhone) is.
    Amounts given as "<amount> of <what>" are of the <what> (`_what_figures_are_of`)."""
    if not (_ASKS_AMOUNT_RE.search(question) and asks_for_figure(question)):
        return False
    wanted = amount_terms(question, document_names(question, sources))
    return bool(wanted) and not wanted & amount_terms(_what_figures_are_of(MARKER_RE.sub(" ", text)))


def should_withhold(verdicts: Sequence[SentenceVerdict]) -> bool:
    """Is the answer not to be shown as it was written: most of it unsupported, its first claim
    unsupported, or any sentence giving a figure no source has (an answer that works out a figure
    of its own has gone wrong, whatever else it says)?"""
    claims = [v for v in verdicts if v.support != Support.NO_CLAIM]
    if not claims:
        return False
    return (support_ratio(list(verdicts)) < MIN_SUPPORT_RATIO or claims[0].support == Support.UNSUPPORTED
            or any(invents_a_figure(v) for v in claims))


@dataclasses.dataclass
class _Judged:
    """What Answerer._judge made of an answer (as it was, when nothing was checked)."""

    text: str
    abstained: bool
    verdicts: list[SentenceVerdict] = dataclasses.field(default_factory=list)
    added_spans: list[tuple[int, int]] = dataclasses.field(default_factory=list)  # markers attribution added
    draft: str = ""  # the model's text where it was withheld or cut
    draft_verdicts: list[SentenceVerdict] = dataclasses.field(default_factory=list)
    trimmed: int = 0  # unsupported sentences left out of a partly supported answer


class Answerer:
    """Drives one chat client over the pipeline's sources. Safe to reuse across questions."""

    def __init__(
        self,
        pipeline: RagPipeline,
        client: ChatClient,
        options: ChatOptions | None = None,
        *,
        embed: Callable[[list[str]], Any] | None = None,
        passages_with: Callable[[list[str]], dict[str, int]] | None = None,
        is_common: Callable[[str], bool] = lambda word: False,
    ) -> None:
        """`embed` (the embedder's: normalised rows) lets every sentence of the answer be checked
        by meaning as well as words (edgechat.core.answering.verify); without it, words only.
        `passages_with` (the store's) and `is_common` (an everyday word?) let a question about
        something no passage mentions be answered without the model (`relevance`)."""
        self.pipeline = pipeline
        self.client = client
        self.options = options or ChatOptions()
        self.embed = embed
        self.passages_with = passages_with
        self.is_common = is_common

    def stream(
        self,
        request: RagRequest,
        *,
        history: Sequence[ChatMessage] = (),
        options: ChatOptions | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[ChatUpdate]:
        """Yield text deltas; the last update (done=True) carries citations and the response.

        `history` is the saved conversation (what was typed and answered); the retrieved
        context is added for this call only and never written back into it."""
        t0 = time.perf_counter()
        pq = self.pipeline.process(request)
        sources = list(pq.references)
        if not pq.search_skipped:
            sources += self._rows_of_other_amounts(request, sources)
        t_retrieved = time.perf_counter()
        fitted, sources, call_options = self._prompt(request, sources, pq, history, options)

        text = ""
        stop_reason = StopReason.EOS
        first_token: float | None = None
        rel: dict[str, Any] = {}
        abstained = False
        if pq.search_skipped and self.client.kind == ClientKind.EXTRACTIVE:
            text = NO_SEARCH_EXTRACTIVE  # small talk: there is nothing to quote
            yield ChatUpdate(delta=text, text=text)
        elif pq.search_skipped:
            text, stop_reason, first_token = yield from self._generate(fitted.messages, call_options, cancel)
        else:
            rel = relevance(pq, sources, self.passages_with, self.is_common)
            if not rel["relevant"]:
                # Nothing relevant: the model is not asked; the closest passages are quoted.
                abstained = True
                opening = NOT_IN_DOCUMENTS if sources else NOTHING_FOUND
                if rel["missing_words"]:
                    named = missing_sentence(rel["missing_words"])
                    register_own_text(named)
                    opening += " " + named
                text = self._not_found(opening, request.query, sources)
                yield ChatUpdate(delta=text, text=text)
            else:
                text, stop_reason, first_token = yield from self._generate(fitted.messages, call_options, cancel)
                if not text and not sources:
                    text = NOTHING_FOUND
                    yield ChatUpdate(delta=text, text=text)
        own_citations = len(build_citations(text, sources).citations)  # what the writer wrote itself
        checked = not pq.search_skipped and bool(sources) and stop_reason != StopReason.CANCELLED
        judged = self._judge(request.query, text, sources, abstained) if checked else _Judged(text, abstained)
        diagnostics = {
            "retrieval_seconds": t_retrieved - t0,
            "first_token_seconds": None if first_token is None else first_token - t_retrieved,
            "total_seconds": time.perf_counter() - t0,
            "evicted_turns": fitted.evicted_turns,
            "trimmed_sources": fitted.trimmed_sources,
            "prompt_tokens": fitted.tokens,
            "history": fitted.diagnostics,
            "client": self.client.name,
            "model_citations": own_citations,  # accepted citations the writer wrote itself
            "relevance": rel,
        }
        response = self._response(judged, sources, pq, stop_reason, checked, diagnostics)
        yield ChatUpdate(done=True, text=response.text, stop_reason=stop_reason, citations=response.citations,
                         response=response)

    def _prompt(self, request: RagRequest, sources: list[Source], pq: ProcessedQuery,
                history: Sequence[ChatMessage], options: ChatOptions | None,
                ) -> tuple[ReducedHistory, list[Source], ChatOptions]:
        """The messages for the client, the sources that fit beside them, and the options for this
        call (a copy that carries those sources)."""
        base = options or self.options
        budget = max(256, self.client.context_length - base.max_new_tokens)
        shown = sources
        if self.client.kind != ClientKind.EXTRACTIVE and base.source_tokens > 0:
            # A short prompt: each source's sentences about the question (focus.py). The
            # answer is checked, cited and highlighted against the whole passages.
            shown = focus(pq.rewritten_query or request.query, sources, self.client.count_tokens, base.source_tokens)
        fitted = fit_messages(request.query, shown, [m for m in history if not m.pinned], budget, self.client.count_tokens)
        sources = sources[:len(sources) - fitted.trimmed_sources]
        return fitted, sources, dataclasses.replace(base, sources=tuple(sources))

    def _response(self, judged: _Judged, sources: list[Source], pq: ProcessedQuery, stop_reason: StopReason, checked: bool,
                  diagnostics: dict[str, Any]) -> ChatResponse:
        """The answer as shown: its citations (those attribution added marked so), verdicts and
        diagnostics, and whether it is grounded."""
        text, verdicts = judged.text, judged.verdicts
        cites = build_citations(text, sources)
        added_at = {s for s, _ in judged.added_spans}
        for c in cites.citations:
            c.added = bool(c.spans) and all(s in added_at for s, _ in c.spans)
        ratio = support_ratio(verdicts)
        all_supported = all(v.support != Support.UNSUPPORTED for v in verdicts)
        diagnostics.update({
            "markers_added": sum(len(v.markers_added) for v in verdicts),  # by attribution, after the model finished
            "support_ratio": ratio,
            "draft_support_ratio": support_ratio(judged.draft_verdicts) if judged.draft else None,
            "sentences_left_out": judged.trimmed,
        })
        stats = getattr(self.client, "last_stats", None)
        if isinstance(stats, dict):
            diagnostics["generation"] = dict(stats)
        pq.diagnostics.setdefault("answer", {}).update(diagnostics)
        return ChatResponse(
            text=text,
            sources=sources,
            citations=cites.citations,
            unmatched_markers=cites.unmatched,
            grounded=checked and not judged.abstained and all_supported and bool(cites.citations),
            stop_reason=stop_reason,
            processed=pq,
            diagnostics=diagnostics,
            verdicts=verdicts,
            support_ratio=ratio,
            abstained=judged.abstained,
            draft=judged.draft,
            draft_verdicts=judged.draft_verdicts,
        )

    def _judge(self, query: str, text: str, sources: list[Source], abstained: bool) -> _Judged:
        """The answer written (or quoted) checked against its sources: a model's answer kept with
        markers added where a sentence's source is clear, cut to its supported sentences, or
        replaced by a plain "not found" with the closest passages quoted (abstained), the
        model's text then kept as the draft."""
        is_model = self.client.kind != ClientKind.EXTRACTIVE
        verdicts: list[SentenceVerdict] = []
        added_spans: list[tuple[int, int]] = []
        draft, draft_verdicts, trimmed = "", [], 0
        if not abstained:
            verdicts = verify(text, sources, self.embed, query)
            claims_nothing = all(v.support == Support.NO_CLAIM for v in verdicts)
            no_figure = is_model and gives_no_figure(query, text)
            other_amount = is_model and not no_figure and misses_the_amount(query, text, sources)
            if is_model and (says_it_does_not_know(text, verdicts) or claims_nothing or no_figure or other_amount):
                # The model found no answer (or wrote nothing that states anything: a page footer,
                # "Here is an example:"; or no figure for the amount asked, or one of something
                # else): say so plainly and quote the closest passages.
                abstained = True
                draft, draft_verdicts = text, verdicts
                opening = MODEL_FOUND_NONE
                if not claims_nothing and (no_figure or other_amount):
                    opening = NO_FIGURE if no_figure else OTHER_AMOUNT
                text = self._not_found(opening, query, sources)
            elif is_model and should_withhold(verdicts):
                supported = [v for v in verdicts if v.support == Support.SUPPORTED]
                claims = [v for v in verdicts if v.support != Support.NO_CLAIM]
                draft, draft_verdicts = text, verdicts
                # A kept part that only introduces what was left out ("Here's how EdgeChat keeps
                # your documents private:") answers nothing: withheld like the rest.
                says_something = any(not introduces(text[v.start:v.end]) for v in supported)
                supported_text = " ".join(text[v.start:v.end].strip() for v in supported)
                if claims and claims[0].support == Support.SUPPORTED and says_something and gives_no_figure(
                        query, supported_text):
                    # What is left of an answer whose figure was its own gives no figure at all.
                    abstained = True
                    text = self._not_found(NO_FIGURE, query, sources)
                elif claims and claims[0].support == Support.SUPPORTED and says_something:
                    # Only what the documents support is shown; the rest stays in the draft.
                    text = supported_text
                    trimmed = sum(v.support == Support.UNSUPPORTED for v in verdicts)
                    verdicts = verify(text, sources, self.embed, query)
                    text, verdicts, added_spans = attribute(text, verdicts)
                else:
                    abstained = True
                    text = self._not_found(WITHHELD, query, sources)
            elif is_model:
                text, verdicts, added_spans = attribute(text, verdicts)
        if abstained:
            verdicts = verify(text, sources, self.embed)
        return _Judged(text, abstained, verdicts, added_spans, draft, draft_verdicts, trimmed)

    def _rows_of_other_amounts(self, request: RagRequest, sources: Sequence[Source]) -> list[Source]:
        """For a question that puts amounts side by side ("operating expenses compared to
        revenue") when the passages found hold a table row for one but not the other: the passage
        of the same document that holds the other's row ("Total net sales"), searched for in that
        document alone, numbered after the others. Empty otherwise."""
        missing = unfound_amounts(request.query, sources)
        if not missing:
            return []
        holder = asked_rows(request.query, sources)[0][0]
        out: list[Source] = []
        for amount in missing[:MAX_EXTRA_ROWS]:
            found = self.pipeline.process(RagRequest(row_search_words(amount), max_results=ROW_SEARCH_RESULTS,
                                                     scope=Scope("file", holder.path)))
            row = amount_row(amount, found.references)
            if row is None:
                continue
            src = row[0]
            if any(s.chunk_id == src.chunk_id and s.start == src.start for s in [*sources, *out]):
                continue
            out.append(dataclasses.replace(src, ordinal=len(sources) + len(out) + 1))
        return out

    def _generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions, cancel: threading.Event | None
    ) -> Generator[ChatUpdate, None, tuple[str, StopReason, float | None]]:
        """Stream the client's answer; return (text, stop reason, time of the first token)."""
        text = ""
        stop_reason = StopReason.EOS
        first_token: float | None = None
        for upd in self.client.stream(messages, options, cancel):
            if upd.delta:
                if first_token is None:
                    first_token = time.perf_counter()
                text += upd.delta
                yield ChatUpdate(delta=upd.delta, text=text)
            if upd.done:
                stop_reason = upd.stop_reason or StopReason.EOS
                break
        return text, stop_reason, first_token

    def _not_found(self, sentence: str, question: str, sources: Sequence[Source]) -> str:
        """The plain "not in your documents" sentence, then the closest passages quoted. Asked
        for an amount that table rows name, the rows (with their captions) are quoted first and
        the model's withheld or empty answer is not called "not found"."""
        if not sources:
            return sentence
        quoter = ExtractiveClient(types.SimpleNamespace(embed=self.embed) if self.embed is not None else None)
        quoted = of_the_report(question, sources)[:MAX_QUOTES_SOURCES]
        rows = asked_rows(question, sources)  # the rows of figures asked for, from any source
        for holder, _, _ in rows:
            if holder not in quoted:
                quoted.append(holder)
        quotes = quoter.answer_sentences(question, quoted, rows)
        if not quotes:
            return sentence
        heading = CLOSEST
        if rows and sentence in (WITHHELD, MODEL_FOUND_NONE, NO_FIGURE, OTHER_AMOUNT):
            by_number = {s.ordinal: s for s in sources}
            captions = {caption for _, _, caption in rows}
            first = []
            for q, n in quotes:
                if any(n == s.ordinal and q in (row, caption) for s, row, caption in rows):
                    columns = column_line(by_number[n], q) if q not in captions else ""
                    first += [(columns, n), (q, n)] if columns else [(q, n)]  # its columns just above the row
            first = list(dict.fromkeys(first))
            if first:
                quotes = first + [qn for qn in quotes if qn not in first]
                rows_quoted = sum(1 for q, _ in first if q not in captions and not q.startswith(COLUMNS))
                heading = ROW_FIRST if rows_quoted == 1 else ROWS_FIRST
                if sentence == MODEL_FOUND_NONE:  # a row names what was asked: the documents may well say
                    sentence = WITHHELD
        return sentence + "\n\n" + heading + "\n" + "\n".join(f"{q} [{n}]" for q, n in quotes)
