"""A document's title from the text of its first page, for documents whose own title metadata is
missing or says nothing: the line that reads as its heading and, when the page carries labelled
fields ("Label: value" lines, as on a form, a memo or a report's cover), the values that tell one
such document from another.

Twenty files of one kind often share a heading ("Final Report", "Invoice") and differ in their
fields (a place, a date, a name): the title is the heading followed by the first few short values
that say something, in reading order with the left column first ("Final Report, Springfield,
12/12/2007, Model 7"). Values that are codes (one token of letters and digits), bare numbers,
yes/no, or already in the file name add nothing a person recognises and are left out.

Plain line heuristics over the page's text, the same for every kind of document and language with
letters; no word of any collection is involved. `page_title` is used by the parsers and, for
libraries indexed before it existed, by the store on the first page it kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["MAX_TITLE_CHARS", "first_text", "page_title"]

MAX_TITLE_CHARS = 120  # heading and values together; values are dropped from the end past this
HEAD_LINES = 8  # the heading is looked for among the first this many non-blank lines
FIELD_LINES = 40  # labelled fields are looked for among the first this many
MIN_FIELDS = 3  # fewer "Label: value" lines than this are not a form ("Keywords: ..." on a paper)
MAX_VALUES = 3
MAX_VALUE_CHARS = 60
MAX_HEADING_CHARS = 100
MAX_HEADING_WORDS = 14

_LETTER_WORD = re.compile(r"[^\W\d_]{2,}")
# A label at the start of a line: one to five words, the first led by a letter.
_LINE_LABEL = re.compile(r"^([^\W\d_a-z][\w&/().'\u2019-]*(?:[ \t]+[\w&/().'\u2019-]+){0,3})[ \t]*:(?:[ \t]+|$)(.*)$")
# A label further along a line (a second column): a run of capitalised words ending in a colon.
_CAP_WORD = r"[^\W\d_a-z][^\W\d_A-Z][\w'\u2019/-]*"
_INNER_LABEL = re.compile(rf"(?<=\s)((?:{_CAP_WORD})(?:[ \t]+(?:{_CAP_WORD}|&|and|of|or)){{0,3}}):(?=\s|$)")
_DATE = re.compile(r"\b\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\b|\b(?:1[6-9]|20|21)\d\d\b")
_CODE = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[^\W\d_])[\w/.#-]+$")  # one token holding letters and digits
_EMPTY_VALUES = {"yes", "no", "none", "n/a", "na", "unknown", "true", "false", "-", "nil", "null", "tbd", "other"}
# Lines at a page's top that are not its heading: page numbers, "Page 2 of 9", dates, addresses.
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-\u2013(\[]?\s*(?:\d{1,4}|[ivxlc]{1,6})\s*[-\u2013)\]]?"
                          r"(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_ADDRESS = re.compile(r"https?://|www\.|\S@\S|\.(?:com|org|net|edu|gov)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[.!;,:]$|[^\W\d_]{4,}[.!?]\s+\S")
# Words a heading wrapped onto the next line may end with (it goes on below).
_GOES_ON = {"a", "an", "and", "the", "of", "for", "to", "in", "on", "with", "from", "by", "at", "or",
            "&", "-", "\u2013", "\u2014", "de", "du", "des", "la", "le", "les", "et", "der", "die", "das",
            "und", "von", "für", "el", "y", "del"}


_CONNECTORS = {"&", "and", "of", "or", "/", "-"}
# A time of day after a date ("12/12/2007, 1320 local", "May 3, 2021 14:05"): the date says enough.
_TIME_AFTER = re.compile(r"^,?\s*\d{1,2}:?\d{2}(?::\d{2})?\b")


class _Field(NamedTuple):
    line: int  # index among the page's non-blank lines
    column: int  # 0 for the label that starts the line, 1, 2... for labels further along it
    label: str
    value: str


def first_text(pages: Iterable[str], enough: int = 20) -> str:
    """The first page's text: the first of `pages` with at least `enough` visible characters (a
    cover that is a picture has none)."""
    for text in pages:
        if sum(not c.isspace() for c in text[:4000]) >= enough:
            return text
    return ""


def _key(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def _fields(lines: list[str]) -> list[_Field]:
    """The "Label: value" pairs of `lines`, several on a line when a second column's label stands
    inside it ("Place: Springfield Number: 17"); a label alone on its line takes the next line."""
    out: list[_Field] = []
    i = 0
    while i < len(lines):
        m = _LINE_LABEL.match(lines[i])
        if not m or _label_words(m.group(1)) > 3:
            i += 1
            continue
        label, rest = m.group(1).strip(), m.group(2).strip()
        if not rest and i + 1 < len(lines) and not _LINE_LABEL.match(lines[i + 1]):
            out.append(_Field(i, 0, label, lines[i + 1].strip()))
            i += 2
            continue
        pieces = [(label, rest)]
        while True:
            value = pieces[-1][1]
            m2 = _INNER_LABEL.search(" " + value)
            if not m2:
                break
            words = m2.group(1).split()
            head = value[:m2.start() - 1].strip()
            if not head:  # the capitalised words before the colon are all there is: half value, half label
                half = (len(words) + 1) // 2
                head, words = " ".join(words[:half]), words[half:]
            elif head.endswith(",") and len(words) > 1:  # "Mill, Eastbrook Number:": a list goes on
                head, words = f"{head} {words[0]}", words[1:]
            pieces[-1] = (pieces[-1][0], head)
            pieces.append((" ".join(words), value[m2.end() - 1:].strip()))
        out.extend(_Field(i, col, lab, val) for col, (lab, val) in enumerate(pieces))
        i += 1
    return out


def _label_words(label: str) -> int:
    return sum(1 for w in label.split() if w.lower() not in _CONNECTORS)


def _telling(value: str, known: set[str]) -> bool:
    """Whether a field's value can tell its document apart from others of its kind: short, says
    something in words or is a date, is not a code or a number alone, and is not in `known` (the
    heading and the file name, squeezed by _key)."""
    v = value.strip(" ,;:.-\u2013\u2014|")
    if not v or len(v) > MAX_VALUE_CHARS or len(v.split()) > 8 or v.lower() in _EMPTY_VALUES:
        return False
    if _SENTENCE.search(v) and len(v.split()) > 4:
        return False
    if not _LETTER_WORD.search(v) and not _DATE.search(v):
        return False
    if _CODE.match(v) or _ADDRESS.search(v):
        return False
    return not any(_key(v) in k for k in known)


def _without_time(value: str) -> str:
    for m in _DATE.finditer(value):
        if _TIME_AFTER.match(value[m.end():]):
            return value[:m.end()]
    return value


def _heading_like(line: str) -> bool:
    s = line.strip()
    if not s or len(s) > MAX_HEADING_CHARS or len(s.split()) > MAX_HEADING_WORDS:
        return False
    if _PAGE_NUMBER.match(s) or _ADDRESS.search(s) or not _LETTER_WORD.search(s):
        return False
    first = next((c for c in s if c.isalnum()), "")
    if not first or first.islower():
        return False
    letters = sum(c.isalpha() for c in s)
    if letters < 0.5 * sum(not c.isspace() for c in s):  # mostly figures: a date, a reference
        return False
    return not _SENTENCE.search(s)


def _goes_on(line: str, nxt: str) -> bool:
    """Whether `line` goes on onto `nxt`: it ends with a word that cannot end a heading, or `nxt`
    starts in lower case."""
    return line.split()[-1].lower() in _GOES_ON or nxt[0].islower()


def _heading_at(lines: list[str], i: int) -> str | None:
    """The heading that starts at line `i`, with the lines it wraps onto (while a line ends with
    a word that goes on, or the next one starts in lower case); None when the whole reads as a
    sentence (the top of a paragraph) or is too long for a heading."""
    parts = [lines[i]]
    j = i + 1
    while j < len(lines) and len(parts) < 3:
        nxt = lines[j]
        if not _goes_on(parts[-1], nxt):
            break
        parts.append(nxt)
        j += 1
    text = " ".join(parts)
    if len(text) > MAX_HEADING_CHARS or len(text.split()) > MAX_HEADING_WORDS or _SENTENCE.search(text):
        return None
    return text


def page_title(text: str, file_name: str = "") -> str | None:
    """A title from a first page's `text` (see the module docstring), or None when the page has
    neither a heading near its top nor labelled fields. `file_name` (the stem) is shown beside the
    title, so values it already holds are left out."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:FIELD_LINES]
    if not lines:
        return None
    fields = _fields(lines)
    form = sum(1 for f in fields if 0 < len(f.value) <= MAX_VALUE_CHARS) >= MIN_FIELDS
    top = min(f.line for f in fields) if form else len(lines)

    heading = None
    if form:  # a form's own name stands just above its fields: the nearest heading above them
        for i in range(min(top, HEAD_LINES) - 1, -1, -1):
            if _heading_like(lines[i]):
                for _ in range(2):  # the heading begins on a line above and wraps onto this one
                    if i > 0 and _goes_on(lines[i - 1], lines[i]):
                        i -= 1
                heading = _heading_at(lines, i)
                if heading:
                    break
    else:
        for i in range(min(len(lines), HEAD_LINES)):
            s = lines[i]
            if len(s) > MAX_HEADING_CHARS or len(s.split()) > MAX_HEADING_WORDS:
                break  # body text begins: a heading would have come before it
            if _heading_like(s):
                heading = _heading_at(lines, i)
                break
            if _SENTENCE.search(s) and not _PAGE_NUMBER.match(s):
                break

    values: list[str] = []
    if form:
        known = {_key(file_name), _key(heading or "")} - {""}
        for f in sorted(fields, key=lambda f: (f.column, f.line)):
            v = _without_time(f.value.strip(" ,;:.-\u2013\u2014|"))
            k = _key(v)
            if not _telling(v, known) or any(k in o or o in k for o in map(_key, values)):
                continue
            values.append(v)
            if len(values) == MAX_VALUES:
                break
    parts = ([heading] if heading else []) + values
    while len(parts) > 1 and len(", ".join(parts)) > MAX_TITLE_CHARS:
        parts.pop()
    return ", ".join(parts) or None
