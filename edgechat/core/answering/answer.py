"""One pass from a question to what the person sees; docs/answers.md explains each step.

retrieve (search.pipeline) -> subject (search.subject: the documents the question names) ->
evidence (evidence.py; too weak: "not in your documents", no model asked) -> write (prompt.py; a
first token likely to begin "I do not know" ends it or, for some models, is passed over) -> check
(judge.py: each sentence once completed, the first also for how sure the model was of it; the first
that does not hold ends the answer) -> present (the checked sentences with chips, the quotes they
were written from under them). Nothing is shown and then taken back, nor kept between questions.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from edgechat.core.answering.citations import MARKER_RE, build_citations, marker_numbers, sentence_spans
from edgechat.core.answering.evidence import Quote, Selection, question_parts, select
from edgechat.core.answering.history import ReducedHistory
from edgechat.core.answering.judge import Judgement, Library, judge
from edgechat.core.answering.prompt import CLOSE_FENCE, DONT_KNOW, OPEN_FENCE, fit_messages
from edgechat.core.answering.words import figures, terms
from edgechat.core.llm.client import ChatClient
from edgechat.core.llm.support_check import SelfCheck, SupportChecker
from edgechat.core.llm.sureness import Sureness
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
from edgechat.core.search.pipeline import RagPipeline
from edgechat.core.search.subject import Description, Subject, named_documents

__all__ = ["MODEL_FOUND_NONE", "MODEL_NOT_CHECKED", "NOTHING_FOUND", "NOT_IN_DOCUMENTS", "NO_SEARCH_EXTRACTIVE",
           "MODEL_UNSURE", "YOUR_DOCUMENTS_SAY", "Answerer", "Gathered", "prompt_quotes"]

NOTHING_FOUND = "Nothing in your library matched this question, so there is nothing to cite."
NO_SEARCH_EXTRACTIVE = (
    "That doesn't look like a question about your documents, so nothing was searched. "
    "Without a language model EdgeChat can only answer from your documents: ask about them.")
NOT_IN_DOCUMENTS = "Your documents don't say: nothing in them is close enough to this question."
MODEL_FOUND_NONE = "Your documents don't seem to answer this: the passages closest to it do not say."
MODEL_NOT_CHECKED = ("No answer is shown: what the model wrote does not hold against the passages it was given. "
                     "They are listed under Sources.")
MODEL_UNSURE = "No answer is shown: the model was unsure of what it wrote. Its passages are listed under Sources."
UNSURE = "the model was unsure of it"
MODEL_RESTATED = ("No answer is shown: what the model wrote only repeats the question. The passages it was "
                  "given are listed under Sources.")
YOUR_DOCUMENTS_SAY = "Your documents say:"

POOL = 16  # passages read for evidence
SUBJECT_SEARCH = 12  # passages searched for within each named document
MAX_SUBJECT_FILES = 2
SHOWN_QUOTES = 3  # quotes shown under an answer (or as the extractive client's, should its lines not hold)


@dataclasses.dataclass(frozen=True)
class Tuning:
    """What is calibrated per client on the tuning halves (docs/answers.md): the words of evidence it
    reads for a question that asks one thing (each further thing adds a third); the best evidence score
    below which it is not asked (`--calibrate`); the first token's probability of "I do not know" at
    which it declines (`--calibrate-decline`), or that its answer never begins so (the checks decide)."""

    prompt_words: int = 100
    min_evidence: float = 0.49
    decline_at: float = math.inf
    sure_at: float = 0.0  # the words' mean token probability the answer's first sentence needs (--calibrate-sure)
    self_check: bool = False  # asks the model whether the evidence supports each sentence (judge.py, 7)
    avoid_decline: bool = False


TUNED = {"qwen2.5-coder-0.5b-instruct-int4": Tuning(decline_at=0.14),
         "qwen2.5-coder-1.5b-instruct-int4": Tuning(prompt_words=60, min_evidence=0.45, sure_at=0.80,
                                                     self_check=True, avoid_decline=True)}

# The model saying it cannot answer, in the prompt's words or its own.
_DONT_KNOW_RE = re.compile(
    r"\b(?:do not|don't|cannot|can't|can not) (?:know|answer|find|determine|tell)\b"
    r"|\b(?:does not|doesn't|do not|don't) (?:say|contain|mention|provide|include|specify|state)\b"
    r"|\bnot (?:mentioned|provided|stated|specified|found|available) in\b"
    r"|\bno (?:information|mention)\b", re.IGNORECASE)


# The prompt's own markup, which a small model sometimes writes back before it answers.
_FENCE_RE = re.compile(rf"{re.escape(OPEN_FENCE)}|{re.escape(CLOSE_FENCE)}", re.IGNORECASE)
_BARE_POLARITY_RE = re.compile(r"\W*(?:yes|no)\W*", re.IGNORECASE)  # a sentence only "yes" or "no"


@dataclasses.dataclass
class Gathered:
    """What a question found before anything is written (`Answerer.gather`)."""

    subject: Subject
    passages: list[Source]  # read for evidence, best first
    selection: Selection
    sources: list[Source]  # the passages holding the chosen quotes, numbered from 1


@dataclasses.dataclass
class _Shown:
    """The answer as it is shown, built sentence by sentence."""

    text: str = ""
    verdicts: list[SentenceVerdict] = dataclasses.field(default_factory=list)
    added_at: set[int] = dataclasses.field(default_factory=set)  # starts of markers EdgeChat added
    sure: float | None = None  # how sure the model was of the sentence that opened the answer (or ended it)

    def add(self, sentence: str, verdict: SentenceVerdict, gap: str, added: str = "") -> str:
        """Append `sentence` (its verdict's span made relative to the shown text), which ends with
        `added` when that is a marker EdgeChat added; the delta."""
        delta = (gap if self.text else "") + sentence
        start = len(self.text) + len(delta) - len(sentence)
        self.text += delta
        verdict.start, verdict.end = start, start + len(sentence)
        self.verdicts.append(verdict)
        if added:
            self.added_at.add(len(self.text) - len(added))
        return delta


def _said(sentence: str) -> str:
    """What a text says, to tell one already said: its words, without markers, case or end."""
    return " ".join(MARKER_RE.sub(" ", sentence).lower().split()).rstrip(" .!?;:")


def prompt_quotes(question: str, quotes: Sequence[Quote], words: int) -> list[Quote]:
    """The chosen quotes the model is given, best first, while they fit in `words` words (the first
    always): the prompt stays short, since the model reads all of it before writing. A quote that
    only says the question back is left out; each further thing the question asks brings a third
    more words (the quote that says the second thing is the one a budget for one leaves out)."""
    asked = terms(question)
    told = [q for q in quotes if terms(q.text) - asked] or quotes
    words = words * (2 + len(question_parts(question))) // 3
    out: list[Quote] = []
    used = 0
    for q in told:
        n = len(q.text.split())
        if not out or used + n <= words:
            out.append(q)
            used += n
    return out


def _with_marker(sentence: str, supporting: Sequence[int]) -> tuple[str, list[int], list[int]]:
    """`sentence` with chips of supporting sources only: a written marker whose source does not say
    it is taken out, and when none is left the best supporting source's is added. Returns (text,
    added, wrong): the markers EdgeChat added and the written ones it took out."""
    written = marker_numbers(sentence)
    wrong = [n for n in written if n not in supporting]
    if not wrong and written:
        return sentence, [], []
    kept = [n for n in dict.fromkeys(written) if n in supporting]
    bare = re.sub(r"\s+([.,;:!?])", r"\1", MARKER_RE.sub("", sentence).strip())
    added = [] if kept else [supporting[0]]
    return f"{bare} " + "".join(f"[{n}]" for n in kept or added), added, wrong


def _derailed(verdicts: Sequence[SentenceVerdict]) -> bool:
    """Whether a sentence of the draft did not hold, which ends the answer."""
    return any(v.support == Support.UNSUPPORTED for v in verdicts)


class Answerer:
    """Drives one chat client over the pipeline's passages. Safe to reuse across questions: it
    keeps nothing between them."""

    def __init__(self, pipeline: RagPipeline, client: ChatClient, options: ChatOptions | None = None, *,
                 embed: Callable[[list[str]], Any] | None = None,
                 describe: Callable[[Sequence[str]], Mapping[str, Description]] | None = None,
                 searched: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
                 checker: SupportChecker | None = None,
                 writing: Callable[[str, Sequence[str]], list[str]] | None = None) -> None:
        """`embed` (normalised rows) scores evidence and claims by meaning; `describe` (the store's
        `describe_files`) says what each file says of itself; `searched` (`searched_texts`) gives
        each passage as indexed, boilerplate left out; `checker`: a support checker the user
        configured (edgechat.core.llm.support_check), for the judge; `writing(phrase, file_ids)`
        (the store's `texts_writing`): passages of those files that write the phrase."""
        self.pipeline, self.client, self.options = pipeline, client, options or ChatOptions()
        self.embed, self.describe, self.searched, self.checker = embed, describe, searched, checker
        self.writing = writing
        self.tuning = TUNED.get(client.name, Tuning())

    # ------------------------------------------------------------------ the pass

    def stream(self, request: RagRequest, *, history: Sequence[ChatMessage] = (), options: ChatOptions | None = None,
               cancel: threading.Event | None = None) -> Iterator[ChatUpdate]:
        """Yield the shown answer's deltas; the last update (done=True) carries the response.
        `history` is the saved conversation; the evidence is added for this call only."""
        t0 = time.perf_counter()
        base = options or self.options
        pq = self.pipeline.process(dataclasses.replace(request, max_results=max(request.max_results, POOL)))
        if pq.search_skipped:
            yield from self._small_talk(request, pq, history, base, cancel, t0)
            return
        found = self.gather(request, pq)
        subject, passages, selection, sources = found.subject, found.passages, found.selection, found.sources
        question = pq.rewritten_query or request.query
        t_evidence = time.perf_counter()
        diagnostics: dict[str, Any] = {
            "client": self.client.name,
            "retrieval_seconds": t_evidence - t0,
            "subject": {"file_ids": subject.file_ids, "words": subject.words},
            "evidence": {"best": round(selection.best, 4), "threshold": self.tuning.min_evidence,
                         "passages_read": selection.passages, "quotes_read": selection.read,
                         "chosen": len(selection.quotes), "prompt_words": self.tuning.prompt_words},
        }
        if not passages or selection.best < self.tuning.min_evidence:
            text = NOT_IN_DOCUMENTS if passages else NOTHING_FOUND
            yield ChatUpdate(delta=text, text=text)
            shown_sources = sources or [dataclasses.replace(p, ordinal=i) for i, p in enumerate(passages[:3], 1)]
            yield self._done(_Shown(text), shown_sources, pq, StopReason.EOS, diagnostics, abstained=True)
            return

        quotes = selection.quotes
        read = self.library_read(question, passages, subject)
        evidence = tuple((q.source.ordinal, q.text) for q in prompt_quotes(question, quotes, self.tuning.prompt_words))
        yield ChatUpdate(sources=list(sources))
        fitted = self._fit(request.query, sources, history, base, evidence)
        call = dataclasses.replace(base, sources=tuple(sources), evidence=evidence, decline_text=DONT_KNOW,
                                   avoid_decline=self.tuning.avoid_decline)
        shown = _Shown()
        draft = ""
        draft_verdicts: list[SentenceVerdict] = []
        done_upto = 0  # characters of the draft already judged
        first_token: float | None = None
        first_shown: float | None = None
        stop_reason = StopReason.EOS
        p_decline: float | None = None
        declined_early = False
        sure = Sureness()  # of the draft
        confirm = SelfCheck(self.client, cancel) if self.tuning.self_check and hasattr(self.client, "p_yes") else None
        stream = self.client.stream(fitted.messages, call, cancel)

        def judged(final: bool) -> Iterator[ChatUpdate]:  # the draft's sentences completed since done_upto
            nonlocal first_shown
            for delta in self._judge_completed(draft, done_upto, final, quotes, question, shown, draft_verdicts,
                                               subject.words, read, confirm, sure):
                first_shown = first_shown or time.perf_counter()
                yield ChatUpdate(delta=delta, text=shown.text)

        for upd in stream:
            if upd.p_decline is not None:
                p_decline = upd.p_decline
                if declined_early := p_decline >= self.tuning.decline_at:
                    break  # the model would likely have said it does not know: it is not read further
            if upd.delta:
                first_token = first_token or time.perf_counter()
                draft += upd.delta
                sure.add(upd.delta, upd.token_p)
                yield from judged(False)
                done_upto = draft_verdicts[-1].end if draft_verdicts else 0
                if _derailed(draft_verdicts):
                    break  # a sentence did not hold: what follows it is not read
            if upd.done:
                stop_reason = upd.stop_reason or StopReason.EOS
                break
        getattr(stream, "close", lambda: None)()  # a generation left early frees the model at once
        if stop_reason != StopReason.CANCELLED and not _derailed(draft_verdicts):
            yield from judged(True)
        derailed = _derailed(draft_verdicts)  # the final sentences judged included
        abstained = False
        kept_whole = bool(shown.verdicts) and not derailed
        if not shown.text and stop_reason != StopReason.CANCELLED:
            first = MARKER_RE.sub("", draft[draft_verdicts[0].start:draft_verdicts[0].end]) if draft_verdicts else ""
            if _BARE_POLARITY_RE.fullmatch(first):  # nothing to check: the passages' words answer (docs/answers.md, 5)
                self._quote_evidence(shown, quotes, question)
            elif draft_verdicts and draft_verdicts[-1].reason == UNSURE:  # withheld before it was judged
                shown.text, abstained = MODEL_UNSURE, True
            elif declined_early or _DONT_KNOW_RE.search(draft):
                # The writer found no answer in the evidence; shown, it was mostly wrong (docs/answers-measurements.md).
                shown.text, abstained = MODEL_FOUND_NONE, True
            elif draft_verdicts and all(v.support == Support.NO_CLAIM for v in draft_verdicts):
                # Its sentences say no more than the question: nothing false, no answer (docs/answers-measurements.md).
                shown.text, abstained = MODEL_RESTATED, True
            elif self.client.kind == ClientKind.MODEL:
                # Its first sentence does not hold, and its evidence rarely held the answer (docs/answers-measurements.md).
                shown.text, abstained = MODEL_NOT_CHECKED, True
            else:
                self._quote_evidence(shown, quotes, question)
            first_shown = first_shown or time.perf_counter()
            yield ChatUpdate(delta=shown.text, text=shown.text)
        elif self.client.kind == ClientKind.MODEL and stop_reason != StopReason.CANCELLED:
            # The checked answer, and under it the evidence it was written from (where it says more).
            delta = self._quote_evidence(shown, quotes, question)
            if delta:
                yield ChatUpdate(delta=delta, text=shown.text)
        diagnostics.update({
            "p_decline": p_decline,
            "sure": shown.sure,
            "first_token_seconds": None if first_token is None else first_token - t_evidence,
            "first_shown_seconds": None if first_shown is None else first_shown - t0,
            "total_seconds": time.perf_counter() - t0,
            "prompt_tokens": fitted.tokens,
            "evicted_turns": fitted.evicted_turns,
            "history": fitted.diagnostics,
            "model_citations": sum(bool(v.markers_written) for v in draft_verdicts),
            "sentences_left_out": sum(v.support == Support.UNSUPPORTED for v in draft_verdicts),
        })
        stats = getattr(self.client, "last_stats", None)
        if isinstance(stats, dict):
            diagnostics["generation"] = dict(stats)
        if derailed:
            draft = draft[:draft_verdicts[-1].end]  # what was read of it
        keep_draft = self.client.kind == ClientKind.MODEL and draft.strip() and not kept_whole
        yield self._done(shown, sources, pq, stop_reason, diagnostics, abstained=abstained,
                         draft=draft if keep_draft else "", draft_verdicts=draft_verdicts if keep_draft else [])

    # ------------------------------------------------------------------ its steps

    def gather(self, request: RagRequest, pq: ProcessedQuery | None = None) -> Gathered:
        """Steps 1-3 of the pass: what the question is about, the passages read and the evidence
        chosen from them (`pq`: the retrieval already made for `request`)."""
        if pq is None:
            pq = self.pipeline.process(dataclasses.replace(request, max_results=max(request.max_results, POOL)))
        question = pq.rewritten_query or request.query
        subject = self._subject(question, pq)
        passages = self._passages(question, pq, subject)
        searched = self.searched([p.chunk_id for p in passages if p.chunk_id]) if self.searched else None
        selection = select(question, passages, self.embed, naming=subject.identity_words, searched=searched)
        sources = self._numbered(selection, passages)
        pq.references = sources  # what the answer is written from ("How this was found" lists them)
        return Gathered(subject, passages, selection, sources)

    def _subject(self, question: str, pq: ProcessedQuery) -> Subject:
        if pq.subject_files:  # named when retrieval preferred them
            return Subject(list(pq.subject_files), list(pq.subject_words), list(pq.subject_identity_words))
        if self.describe is None or not pq.raw_candidates:
            return Subject()
        file_ids = list(dict.fromkeys(c.file_id for c in pq.raw_candidates))
        return named_documents(question, pq.raw_candidates, self.describe(file_ids))

    def library_read(self, question: str, passages: Sequence[Source], subject: Subject) -> Library:
        """What the passages read write (`Library.read`), with the question's figures that the
        documents it names write elsewhere: the release, section or year a question names is often
        written only in a heading above the passages read, and is then no premise of the question's
        (judge.py, 2)."""
        read = Library.read(passages, subject.words)
        if self.writing is None or not subject:
            return read
        found = {f for f in figures(question) if f not in read.figures
                 and any(f in figures(text) for text in self.writing(f, subject.file_ids))}
        return dataclasses.replace(read, figures=read.figures | found) if found else read

    def _passages(self, question: str, pq: ProcessedQuery, subject: Subject) -> list[Source]:
        """The passages evidence is read from: the retrieved ones, or, when the question names its
        documents, theirs (with more found by a search within each)."""
        if not subject:
            return list(pq.references[:POOL])
        named = set(subject.file_ids)
        out = [s for s in pq.references if s.file_id in named]
        paths = list(dict.fromkeys(c.path for c in pq.raw_candidates if c.file_id in named))
        seen = {s.chunk_id for s in out}
        for path in paths[:MAX_SUBJECT_FILES]:
            found = self.pipeline.process(RagRequest(question, max_results=SUBJECT_SEARCH, scope=Scope("file", path)))
            for s in found.references:
                if s.chunk_id not in seen:
                    seen.add(s.chunk_id)
                    out.append(s)
        return out[:POOL]

    @staticmethod
    def _numbered(selection: Selection, passages: Sequence[Source]) -> list[Source]:
        """The passages that hold chosen quotes, numbered 1..n in the order of their best quote; the
        quotes are moved onto the numbered copies. A copy carries the table headings its first quoted
        row is read with, so the model reads the rows under them (prompt.py)."""
        numbered: dict[str, Source] = {}
        for q in selection.quotes:
            key = q.source.chunk_id or str(id(q.source))
            if key not in numbered:
                numbered[key] = dataclasses.replace(q.source, ordinal=len(numbered) + 1)
            if q.row and not numbered[key].table_header:
                numbered[key].table_header = q.headings
            q.source = numbered[key]
        return list(numbered.values())

    def _fit(self, question: str, sources: list[Source], history: Sequence[ChatMessage], options: ChatOptions,
             evidence: tuple[tuple[int, str], ...]) -> ReducedHistory:
        budget = max(256, self.client.context_length - options.max_new_tokens)
        return fit_messages(question, sources, [m for m in history if not m.pinned], budget,
                            self.client.count_tokens, evidence=evidence)

    def _judge_completed(self, draft: str, done_upto: int, final: bool, quotes: Sequence[Quote], question: str,
                         shown: _Shown, draft_verdicts: list[SentenceVerdict], naming: Sequence[str],
                         read: Library, confirm: Callable[[str, str], float] | None = None,
                         sure: Sureness | None = None) -> Iterator[str]:
        """Judge the draft's sentences completed since `done_upto` (all of them when `final`); yield
        the delta of each one shown. One that would open the answer is withheld first when the model
        wrote its words with a mean token probability under `Tuning.sure_at` (`sure`, of the draft)."""
        spans = [(s, e) for s, e in sentence_spans(draft) if s >= done_upto]
        if not final:
            spans = spans[:-1]  # the last may still grow
        for s, e in spans:
            if shown.text and _said(draft[s:e]) in _said(shown.text):  # already shown: says nothing more
                draft_verdicts.append(SentenceVerdict(s, e, Support.NO_CLAIM, reason="repeats a sentence shown"))
                continue
            p = None if shown.text or sure is None or _DONT_KNOW_RE.search(draft[s:e]) else sure.of(s, e)
            if p is not None:  # the sentence would open the answer, and is not one of not knowing
                shown.sure = p
                if p < self.tuning.sure_at:
                    draft_verdicts.append(SentenceVerdict(s, e, Support.UNSUPPORTED, reason=UNSURE))
                    return
            verdict = self._verdict(draft[s:e], quotes, question, naming, read, confirm)
            verdict.start, verdict.end = s, e
            draft_verdicts.append(verdict)
            if verdict.support == Support.UNSUPPORTED:
                return  # the answer ends before it (see the module docstring, step 5)
            if verdict.support != Support.SUPPORTED:
                continue
            text, added, wrong = _with_marker(draft[s:e], verdict.sources)
            gap = "\n" if "\n" in draft[max(0, s - 3):s] else " "
            yield shown.add(text, dataclasses.replace(verdict, markers_added=added, wrong_markers=wrong), gap,
                            f"[{added[0]}]" if added else "")

    def _verdict(self, sentence: str, quotes: Sequence[Quote], question: str, naming: Sequence[str] = (),
                 read: Library | None = None, confirm: Callable[[str, str], float] | None = None) -> SentenceVerdict:
        if self.client.kind == ClientKind.EXTRACTIVE:  # its lines are the evidence, quoted
            said = [q for q in quotes if q.text in sentence]
            if said:
                return SentenceVerdict(0, 0, Support.SUPPORTED, sources=[said[0].source.ordinal],
                                       evidence=Judgement(Support.SUPPORTED, said[:1]).evidence(),
                                       markers_written=marker_numbers(sentence))
        if not _FENCE_RE.sub("", MARKER_RE.sub("", sentence)).strip():
            return SentenceVerdict(0, 0, Support.NO_CLAIM, reason="repeats the prompt's markup")
        j = judge(sentence, quotes, question, self.embed, naming, self.checker, read, confirm)
        if j.support != Support.SUPPORTED and _DONT_KNOW_RE.search(sentence):
            # Words of not knowing ("no information is ...") in a sentence the evidence says are a claim.
            return SentenceVerdict(0, 0, Support.NO_CLAIM, reason="says the sources do not answer")
        return SentenceVerdict(0, 0, j.support, sources=list(dict.fromkeys(q.source.ordinal for q in j.quotes)),
                               evidence=j.evidence(), markers_written=marker_numbers(sentence), reason=j.reason)

    @staticmethod
    def _quote_evidence(shown: _Shown, quotes: Sequence[Quote], question: str) -> str:
        """Under the answer, with their markers, the quotes it does not already say: those its
        sentences rest on, then the best others that share a content word with the question (an
        answer that says one part leaves the rest to them); with no answer, the best. The delta."""
        if shown.text:
            used = {(e.number, e.start) for v in shown.verdicts for e in v.evidence}
            said, asked = _said(shown.text), terms(question)
            rests = [q for q in quotes if (q.source.ordinal, q.start) in used]
            bears = [q for q in quotes if (q.source.ordinal, q.start) not in used and terms(q.reading) & asked]
            chosen = [q for q in rests + bears if _said(q.text) not in said]
        else:
            chosen = list(quotes)
        if not chosen:
            return ""
        before = len(shown.text)
        shown.add(YOUR_DOCUMENTS_SAY, SentenceVerdict(0, 0, Support.NO_CLAIM), "\n\n")
        for q in chosen[:SHOWN_QUOTES]:
            verdict = SentenceVerdict(0, 0, Support.SUPPORTED, sources=[q.source.ordinal],
                                      evidence=Judgement(Support.SUPPORTED, [q]).evidence())
            marker = f"[{q.source.ordinal}]"
            shown.add(f"{q.text} {marker}", verdict, "\n", marker)  # EdgeChat's marker, not the model's
        return shown.text[before:]

    def _small_talk(self, request: RagRequest, pq: ProcessedQuery, history: Sequence[ChatMessage],
                    options: ChatOptions, cancel: threading.Event | None, t0: float) -> Iterator[ChatUpdate]:
        """A turn that needs no documents: the model answers it as it is; without a model there is
        nothing to quote."""
        shown = _Shown()
        stop_reason = StopReason.EOS
        fitted = self._fit(request.query, [], history, options, ())
        if self.client.kind == ClientKind.EXTRACTIVE:
            shown.text = NO_SEARCH_EXTRACTIVE
            yield ChatUpdate(delta=shown.text, text=shown.text)
        else:
            for upd in self.client.stream(fitted.messages, options, cancel):
                if upd.delta:
                    shown.text += upd.delta
                    yield ChatUpdate(delta=upd.delta, text=shown.text)
                if upd.done:
                    stop_reason = upd.stop_reason or StopReason.EOS
                    break
        diagnostics = {"client": self.client.name, "total_seconds": time.perf_counter() - t0,
                       "prompt_tokens": fitted.tokens}
        yield self._done(shown, [], pq, stop_reason, diagnostics)

    def _done(self, shown: _Shown, sources: list[Source], pq: ProcessedQuery, stop_reason: StopReason,
              diagnostics: dict[str, Any], *, abstained: bool = False, draft: str = "",
              draft_verdicts: list[SentenceVerdict] | None = None) -> ChatUpdate:
        """The last update of an answer: done, with its response."""
        cites = build_citations(shown.text, sources)
        for c in cites.citations:
            c.added = bool(c.spans) and all(s in shown.added_at for s, _ in c.spans)
        verdicts = shown.verdicts
        ratio = diagnostics["support_ratio"] = support_ratio(verdicts)
        pq.diagnostics.setdefault("answer", {}).update(diagnostics)
        grounded = bool(sources) and not abstained and bool(cites.citations)  # only what holds is shown
        response = ChatResponse(text=shown.text, sources=sources, citations=cites.citations,
                                unmatched_markers=cites.unmatched, grounded=grounded, stop_reason=stop_reason,
                                processed=pq, diagnostics=diagnostics, verdicts=verdicts, support_ratio=ratio,
                                abstained=abstained, draft=draft, draft_verdicts=list(draft_verdicts or []))
        return ChatUpdate(done=True, text=shown.text, stop_reason=stop_reason, citations=cites.citations,
                          response=response)
