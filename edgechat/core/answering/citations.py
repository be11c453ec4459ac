"""Turning the [n] markers of an answer into citations of numbered sources: pure and total (any
`str` gives a result, anything else reads as the empty answer; nothing raises).

A marker is a bracket group of source numbers 1-999999 in ASCII digits, no leading zero: ``[1]``,
``[1,2]``, ``[1; 2]`` (spaces or tabs around the separator, never a newline); ``[1][2]`` is two.
Not markers: ``[0]``, ``[01]``, ``[-1]``, ranges (``[1-3]``), ``[ 3 ]``, Markdown links and
footnotes (``[^1]``). ``[12]`` with ten sources names none (`CitationResult.unmatched`), never
``[1][2]``. `Citation.spans` holds one span per occurrence of its number (the whole bracket alone,
its digits inside a group), so spans of different numbers never overlap; `marker_spans` gives the
whole groups (what the window draws as chips).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from edgechat.core.records import Citation, CitationResult, Source

__all__ = ["MARKER_RE", "build_citations", "cited_sentence_spans", "ends_abbreviation", "marker_numbers",
           "marker_spans", "sentence_spans", "trimmed"]

_NUM = r"[1-9][0-9]{0,5}"
_SEP = r"[ \t]*[,;][ \t]*"

#: One bracket marker; group 1 is the inside of the brackets. Not followed by "(" (a link).
MARKER_RE = re.compile(rf"\[({_NUM}(?:{_SEP}{_NUM})*)\](?!\()")
_DIGITS_RE = re.compile(r"[0-9]+")


def _as_text(answer: object) -> str:
    return answer if isinstance(answer, str) else ""


def _marker_items(answer: str) -> list[tuple[int, int, list[tuple[int, int, int]]]]:
    """Every marker as (start, end, [(number, num_start, num_end), ...])."""
    return [(m.start(), m.end(), [(int(d.group()), m.start(1) + d.start(), m.start(1) + d.end())
                                  for d in _DIGITS_RE.finditer(m.group(1))])
            for m in MARKER_RE.finditer(answer)]


def marker_spans(answer: str) -> list[tuple[int, int, list[int]]]:
    """Every bracket marker of `answer` as ``(start, end, numbers)``, in order: ``answer[start:end]``
    is the whole group (``"[1, 2]"``), `numbers` its numbers as written (duplicates kept), whether or
    not they name a source. The window draws these as chips."""
    return [(s, e, [n for n, _, _ in nums]) for s, e, nums in _marker_items(_as_text(answer))]


def marker_numbers(answer: str) -> list[int]:
    """The numbers of every marker of `answer`, in order, as written."""
    return [n for _, _, numbers in marker_spans(answer) for n in numbers]


def build_citations(answer: str, sources: Sequence[Source]) -> CitationResult:
    """One `Citation` per distinct marker number that names a source (``source.ordinal``; of two
    with one ordinal, the first), ordered by first occurrence; markers naming none are counted."""
    by_ordinal = {source.ordinal: source for source in reversed(list(sources or ()))}  # reversed: the first wins
    citations: dict[int, Citation] = {}
    unmatched = 0
    unmatched_numbers: dict[int, None] = {}
    for start, end, nums in _marker_items(_as_text(answer)):
        alone = len(nums) == 1
        for number, num_start, num_end in nums:
            span = (start, end) if alone else (num_start, num_end)
            named = by_ordinal.get(number)
            if named is None:
                unmatched += 1
                unmatched_numbers.setdefault(number, None)
                continue
            if number not in citations:
                citations[number] = Citation(number=number, title=named.title, path=named.path,
                                             file_id=named.file_id, page=named.page, snippet=named.snippet,
                                             start=named.start, end=named.end, spans=[])
            citations[number].spans.append(span)
    return CitationResult(citations=list(citations.values()), unmatched=unmatched,
                          unmatched_numbers=list(unmatched_numbers))


# --------------------------------------------------------------------------- sentences

_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf al fig figs eq eqs no nos vol pp p ch sec dr mr mrs ms prof st jr sr inc ltd co corp "
    "approx ca resp dept univ jan feb mar apr jun jul aug sep sept oct nov dec".split())
_TERMINATOR_RE = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]\u00bb]*")
_TRAILING_MARKERS_RE = re.compile(rf"(?:[ \t]*{MARKER_RE.pattern})+")
_WORD_BEFORE_RE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def ends_abbreviation(text: str, end: re.Match[str]) -> bool:
    """True if `end`, a match of sentence-ending punctuation in `text`, is a single "." (closing
    quotes or brackets aside) that ends a known abbreviation or an initial ("J. Smith"; a capital
    before a figure ends a sentence: "in Appendix B. 12 sites were ...")."""
    if not end.group().startswith(".") or len(end.group().rstrip("\"'\u201d\u2019)]\u00bb")) != 1:
        return False
    m = _WORD_BEFORE_RE.search(text, max(0, end.start() - 12), end.start())
    word, following = m.group(1) if m else "", text[end.end():end.end() + 3].lstrip()[:1]
    return (len(word) == 1 and word.isupper() and not following.isdigit()) or word.lower().rstrip(".") in _ABBREVIATIONS


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """`text`'s sentences as ``(start, end)`` spans, whitespace trimmed. A sentence ends at every
    line break and at ".", "!", "?" or "…" (closing quotes or brackets after it) before whitespace
    or the end, unless the "." ends an abbreviation or an initial; markers right after it on the
    same line ("It is blue. [1] Grass...") belong to the sentence before."""
    text = _as_text(text)
    cuts = [i for i, ch in enumerate(text) if ch in "\n\r\u2028\u2029"]
    for m in _TERMINATOR_RE.finditer(text):
        if not ends_abbreviation(text, m):
            trailing = _TRAILING_MARKERS_RE.match(text, m.end())
            end = trailing.end() if trailing else m.end()
            if end == len(text) or text[end].isspace():
                cuts.append(end)
    cuts = sorted(set(cuts))
    return trimmed(text, list(zip([0, *cuts], [*cuts, len(text)])))


def trimmed(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` of `text` without their surrounding whitespace; the ones left empty dropped."""
    pieces = ((s, text[s:e]) for s, e in spans)
    return [(s + len(p) - len(p.lstrip()), s + len(p.rstrip())) for s, p in pieces if p.strip()]


def cited_sentence_spans(answer: str, number: int) -> list[tuple[int, int]]:
    """The sentence around each occurrence of marker `number` in `answer`, as
    ``(start, end)`` spans in order, each sentence once (two markers in one sentence give one
    span). A span always contains the marker. Works on the text alone: `number` need not
    name a source."""
    text = _as_text(answer)
    positions = [(s, e) for s, e, nums in _marker_items(text) if any(n == number for n, _, _ in nums)]
    sentences = sentence_spans(text) if positions else []
    return list(dict.fromkeys(next(((ss, se) for ss, se in sentences if ss <= ms and me <= se), (ms, me))
                              for ms, me in positions))
