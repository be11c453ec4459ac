"""Which documents a question is about, from what the documents say of themselves.

A library often holds look-alikes: four quarterly reports of one company, five manuals of one
program, twenty accident reports. A question that names its subject ("the report for the quarter
ended March 31, 2023", "in the fs module", "the accident near Seward") is about the documents whose
own description (file name, title, metadata, the opening of the first page: `Store.describe_files`)
holds the words that name it, and evidence from the others cannot answer it. A web address in the
opening points elsewhere: its words are not the document's.

The rule, for any kind of document: among the documents retrieval found, a word of the question
*names* documents when it is in some of their descriptions but not in all, and it is not a topic
word that the other documents' passages use as freely (so "data" does not name "Data Import
Guide" when every manual's passages talk about data), or that most of the other documents use
somewhere ("module" does not name the page titled "Modules" when every page speaks of its
module). Files named alike but for a number ("guide-2", "guide-3") are editions of one document:
when the question writes the number of one, the others are not weighed, though their text uses
the number ("section 1.1"). Among the documents that hold the most naming words (one that lacks a
name the question gives is not the one it names), those whose identity holds more of the
question's names come first (a document's own name says which it is; its opening may speak of
another), and each naming word counts by how few descriptions hold it; the documents with the
highest total are the subject, when that total is clear of the rest. A name of several words
("September 30, 2023") counts as one more word, held by the descriptions that hold it in order.
Documents named by single words alone ("a single sign-in" and the page
"single-sign-on.md", "a Word document" and a file called "Word") are the subject
only when retrieval finds them too: one of their passages is among its best few, and its best one
when the question writes none of those words as a name (a word in lower case is a common word
before it is a title's). A figure needs no such support, nor does an edition named by its number,
nor a name of several words in the document's identity (file name, title, metadata); one only its
text writes may be the text speaking of another document. A question that writes a file's name
whole, extension too ("in equations.docx"), names that file before any of this. No word list of
any collection is involved.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from edgechat.core.records import Candidate
from edgechat.core.search.words import STOPWORDS, stem

__all__ = ["Description", "Subject", "named_documents"]

TOPIC_SHARE = 0.35  # a word used by more than this share of the other documents' passages is a topic, not a name
DOC_SHARE = 0.5  # nor is a word the passages of more than half the other documents use (three or more)
MARGIN = 0.5  # the subject's score must beat the next document's by this much (in idf units)
FOUND_AMONG = 5  # a document named by single words alone holds one of retrieval's best passages

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_LETTER_RE = re.compile(r"[^\W\d_]")
_WEB_ADDRESS_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"')]+", re.IGNORECASE)
_FIGURE_RE = re.compile(r"(?<![^\W\d_])\d+(?:\.\d+)*")  # a number standing alone: "2", "1.1", not "Q2"
_TOKEN_RE = re.compile(r"(?<![^\W\d_])\d+(?:\.\d+)*|[^\W\d_]+")


def _words(text: str) -> set[str]:
    out = set()
    for w in _WORD_RE.findall(text.lower()):
        if w in STOPWORDS or (len(w) < 2 and not w.isdigit()):
            continue
        out.add(stem(w))
    return out


def _written_as_name(question: str, m: re.Match[str]) -> bool:
    """Is the word `m` of `question` written as a name or a figure: capitalised where a sentence
    does not begin ("the accident near Seward", "the report by Maria"), or holding a digit ("2023",
    "v18")?"""
    w = m.group()
    before = question[:m.start()].rstrip()
    starts_sentence = not before or before[-1] in ".!?:;\"'(\u201c"
    return any(ch.isdigit() for ch in w) or (w[0].isupper() and not starts_sentence)


def _names(question: str) -> set[str]:
    """The words `question` writes as names or figures (`_written_as_name`)."""
    out = set()
    for m in _WORD_RE.finditer(question):
        if _written_as_name(question, m):
            out |= _words(m.group())
    return out


_RUN_GAP_RE = re.compile(r"[\s,'\u2019/-]*")  # what may stand between the words of one name


def _sequence(text: str) -> list[str]:
    """Every word of `text`, stemmed, in its order (small words too: "May 4" is not "4")."""
    return [stem(w) for w in _WORD_RE.findall(text.lower())]


def _name_runs(question: str) -> set[tuple[str, ...]]:
    """The names of several words `question` writes: runs of two or more words written as names or
    figures ("September 30, 2023", "May 4", "Lake of the Woods"), with the small words
    between them. Each word of such a run may be common; together they name one thing."""
    runs: set[tuple[str, ...]] = set()
    run: list[str] = []  # the current run, small words at its end included
    kept: set[str] = set()  # its names and figures
    named = 0  # how many of its words are names or figures
    end = 0

    def close() -> None:
        while run and run[-1] not in kept:
            run.pop()
        if named > 1:
            runs.add(tuple(run))

    for m in _WORD_RE.finditer(question):
        if run and not _RUN_GAP_RE.fullmatch(question[end:m.start()]):
            close()
            run, named, kept = [], 0, set()
        end = m.end()
        low = m.group().lower()
        if _written_as_name(question, m):
            run.append(stem(low))
            kept.add(stem(low))
            named += 1
        elif run and (low in STOPWORDS or len(low) < 2):
            run.append(stem(low))  # a small word: the run may go on past it
        elif run:
            close()
            run, named, kept = [], 0, set()
    if run:
        close()
    return runs


def _holds(sequence: Sequence[str], run: tuple[str, ...]) -> bool:
    n = len(run)
    return any(tuple(sequence[i:i + n]) == run for i in range(len(sequence) - n + 1))


class Description(NamedTuple):
    """What a document says of itself: its `identity` (file name, title, metadata) and the
    `opening` of its first page."""

    identity: str
    opening: str = ""


@dataclass
class Subject:
    """The documents a question names (file ids), best first, with the words that name them and,
    of those, the ones in the documents' identity (file name, title, metadata) rather than in
    their text: those say which document and nothing about what it says."""

    file_ids: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    identity_words: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.file_ids)


def _tokens(text: str) -> list[str]:
    """`text`'s words, stemmed, and its numbers whole ("1.1"), in order; small words left out."""
    return [w if w[0].isdigit() else stem(w) for w in _TOKEN_RE.findall(text.lower()) if w not in STOPWORDS]


def _writes_as_asked(question: list[str], text: list[str], number: str) -> bool:
    """Does `text` write `number` as `question` does: next to the same word, the one before it in
    the question among the two before it in the text, or the one after among the two after
    ("version 1" and "Version 1, February"; "the 2021 annual report" and "report-2021 Annual")?"""
    k = question.index(number)
    before, after = question[k - 1:k], question[k + 1:k + 2]
    return any((before and before[0] in text[max(0, i - 2):i]) or (after and after[0] in text[i + 1:i + 3])
               for i, w in enumerate(text) if w == number)


def _editions(question: str, descriptions: Mapping[str, tuple[str, str]]) -> tuple[set[str], set[str]]:
    """Files named alike but for a number ("guide-2" and "guide-3", "report 2021" and "report
    2022") are editions of one document. When the question writes one's number as its description
    does ("the guide, version 2" and "Guide, Version 2"), the others are not the one it asks about,
    whatever their text says ("see section 2.1"). A number the question writes otherwise ("the 3
    steps") may be another count, and a file's number its place in a series. `descriptions`:
    (identity, opening) by file, the identity's first line its file name (Store.describe_files).
    The editions the question names by their number, and the others."""
    asked = _tokens(question)
    name = {f: identity.split("\n", 1)[0].lower() for f, (identity, _) in descriptions.items()}
    numbers = {f: set(_FIGURE_RE.findall(n)) & set(asked) for f, n in name.items()}
    kind = {f: _FIGURE_RE.sub("#", n) for f, n in name.items()}
    named = {f for f, found in numbers.items() if _LETTER_RE.search(kind[f]) and any(
        _writes_as_asked(asked, _tokens("\n".join(descriptions[f])), x) for x in found)}
    kinds = {kind[f] for f in named}  # each holds "#": a file of the same kind has a number too
    return named, {f for f in name if f not in named and kind[f] in kinds}


def _writes_file_name(question: str, name: str) -> bool:
    """Does `question` write the file name `name` whole, its extension too ("equations.docx", not
    "equations" nor "wiki.md" for "wiki.md.md")?"""
    return Path(name).suffix[1:].isalnum() and re.search(
        rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", question, re.IGNORECASE) is not None


def named_documents(question: str, candidates: Sequence[Candidate],
                    descriptions: Mapping[str, Description | str]) -> Subject:
    """The documents among `candidates`' files that `question` names (see the module docstring);
    an empty Subject when it names none, or names them all alike. `candidates`: the passages
    retrieval found, best first."""
    paths = {c.file_id: c.path for c in candidates if c.file_id in descriptions}
    by_name = [f for f, p in paths.items() if _writes_file_name(question, Path(p).name)]
    if by_name:  # "in the sample equations.docx": that file, whatever else the question's words name
        said = set().union(*(_words(Path(paths[f]).name) for f in by_name))
        written = sorted({w for w in _WORD_RE.findall(question.lower()) if stem(w) in said})
        return Subject(by_name, written, written)
    q_words = _words(question)
    identity = {fid: d.identity if isinstance(d, tuple) else d for fid, d in descriptions.items()}
    # A web address in a page's opening points elsewhere ("<https://example.org/>" under a licence's
    # copyright line): its words are not names the document gives itself.
    opening = {fid: _WEB_ADDRESS_RE.sub(" ", d.opening) if isinstance(d, tuple) else ""
               for fid, d in descriptions.items()}
    # The opening of a page holds common words as well as names: from it, only what the question
    # writes as a name or a figure counts.
    names = _names(question) & q_words
    own_words = {fid: _words(text) for fid, text in identity.items()}
    described = {fid: (own_words[fid] | (_words(opening[fid]) & names if names else set())) & q_words
                 for fid in descriptions}
    if len(described) < 2 or not q_words:
        return Subject()
    n = len(described)
    # A name of several words counts as one, when a description holds it in order.
    runs = _name_runs(question)
    sequences = {fid: (_sequence(identity[fid]), _sequence(opening[fid])) for fid in descriptions} if runs else {}
    held_runs = {fid: {r for r in runs if any(_holds(seq, r) for seq in sequences[fid])} for fid in sequences}
    own_runs = {fid: {r for r in held_runs[fid] if _holds(sequences[fid][0], r)} for fid in sequences}
    df: dict[str | tuple[str, ...], int] = {w: sum(w in d for d in described.values()) for w in q_words}
    df.update({r: sum(r in h for h in held_runs.values()) for r in runs})
    naming = {w for w, k in df.items() if 0 < k < n}
    if not naming:
        return Subject()

    def holds(fid: str, w: str | tuple[str, ...]) -> bool:
        return w in held_runs.get(fid, ()) if isinstance(w, tuple) else w in described.get(fid, set())

    # A topic word is not a name: the passages of documents that do not have it in their
    # description use it too.
    passages: dict[str, list[set[str]]] = {}
    passage_words: dict[str, list[list[str]]] = {}
    for c in candidates:
        passages.setdefault(c.file_id, []).append(_words(c.text))
        if runs:
            passage_words.setdefault(c.file_id, []).append(_sequence(c.text))

    def uses(passage: int, fid: str, w: str | tuple[str, ...]) -> bool:
        return _holds(passage_words[fid][passage], w) if isinstance(w, tuple) else w in passages[fid][passage]

    for w in list(naming):
        others = [(fid, i) for fid, ps in passages.items() if not holds(fid, w) for i in range(len(ps))]
        if others and sum(uses(i, fid, w) for fid, i in others) > TOPIC_SHARE * len(others):
            naming.discard(w)
            continue
        other_docs = [fid for fid in passages if not holds(fid, w)]
        if len(other_docs) >= 3 and sum(any(uses(i, fid, w) for i in range(len(passages[fid])))
                                        for fid in other_docs) > DOC_SHARE * len(other_docs):
            naming.discard(w)
    if not naming:
        return Subject()
    idf = {w: math.log(n / df[w]) for w in naming}
    scores = {fid: sum(idf[w] for w in naming if holds(fid, w)) for fid in described}
    # A document that lacks a word naming the question's subject is not the one it names while
    # another holds more of them ("Q2 2023" of one company is not asked about in a question that
    # names the other): the documents holding the most naming words are weighed against each other.
    # Of editions of one document, those the question names by their number (a document holding a
    # name of several words the question writes, "May 4, 2022", is named by that, whatever its number).
    by_number, other_editions = _editions(question, {f: (identity[f], opening[f]) for f in described})
    held = {fid: sum(holds(fid, w) for w in naming if isinstance(w, str)) for fid in described
            if fid not in other_editions or any(w.isdigit() for r in held_runs.get(fid, ()) for w in r)}
    most = max(held.values())
    # Of those, a document whose identity holds more of the names among them is named before one
    # whose opening text mentions them: a licence that says what "the Open FPL" refers to is not it.
    in_identity = {f: len(own_words[f] & naming & names) for f in held if held[f] == most}
    own_most = max(in_identity.values())
    ranked = sorted((f for f in in_identity if in_identity[f] == own_most), key=lambda f: -scores[f])
    top = scores[ranked[0]]
    if top <= 0:
        return Subject()
    chosen = [f for f in ranked if scores[f] >= top - 1e-9]
    rest = max((scores[f] for f in ranked if f not in chosen), default=0.0)
    if len(chosen) == n or top - rest < MARGIN:
        return Subject()
    # A document named by single words alone ("a single call", "a Word document") is one retrieval
    # finds too: one of its passages is among the best few for the question, and the best one when
    # the question writes none of those words as a name ("a records-based cohort" is not the study
    # titled "... population based cohort study" while retrieval finds another first). A figure, or
    # a name of several words in the document's identity, needs no such support; a name of several
    # words only its text writes may be the text speaking of another document (a licence's
    # definitions: '"the Open FPL" refers to version 3 of ...').
    names_chosen = [w for w in naming if any(holds(f, w) for f in chosen)]
    def needs_no_support(w: str | tuple[str, ...]) -> bool:  # a figure, or a run the identity holds
        return any(w in own_runs[f] for f in chosen) if isinstance(w, tuple) else any(ch.isdigit() for ch in w)

    found_among = FOUND_AMONG if any(w in names for w in names_chosen) else 1
    if (not any(map(needs_no_support, names_chosen)) and not by_number & set(chosen)
            and not any(c.file_id in chosen for c in candidates[:found_among])):
        return Subject()
    stems = {w for f in chosen for w in described[f] & naming}  # the single words; a run's are its own
    own = {w for f in chosen for w in own_words[f] & stems}

    def surface(keep: set[str]) -> list[str]:
        return sorted({w for w in _WORD_RE.findall(question.lower()) if stem(w) in keep})

    return Subject(chosen, surface(stems), surface(own), scores)
