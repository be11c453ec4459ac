"""Rich Text Format (.rtf), turned into text with striprtf (pictures and other destinations
dropped, \\'xx escapes decoded in the file's code page, \\uN characters kept). Each paragraph is
a line, a table row a line with its column names; runs of blank lines become one. Sections are cut as for plain text: about
`SECTION_CHARS` characters each, at paragraph boundaries. Title, author and dates come from the
{\\info} group; a short first line stands in for a missing title.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from edgechat.core.documents.common import _cell, _choose_title, _describe, _put, _resize, _table_lines
from edgechat.core.records import Document, DocumentError, Page, Problem

_CODEPAGE_RE = re.compile(rb"\\ansicpg(\d+)")
_TIME_RE = r"\\{}\s*\\yr(\d{{4}})(?:\\mo(\d{{1,2}}))?(?:\\dy(\d{{1,2}}))?"
_BLANKS_RE = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
# What striprtf's rtf_to_text raises on text it cannot read: a bad number or \u code point, an
# unknown code page, a control word missing its number (\uc with none).
_STRIPRTF_ERRORS = (ValueError, TypeError, LookupError, OverflowError)


def _codepage(data: bytes) -> str:
    m = _CODEPAGE_RE.search(data[:8192])
    name = f"cp{int(m.group(1))}" if m else "cp1252"
    try:
        codecs.lookup(name)
    except LookupError:
        return "cp1252"
    return name


def _info(raw: str, name: str) -> str | None:
    """A text field of the {\\info} group ({\\title ...}, {\\author ...}), as text."""
    from striprtf.striprtf import rtf_to_text

    m = re.search(r"\{\\" + name + r"(?![a-z])\s?((?:[^{}\\]|\\[^{}]|\\[{}])*)\}", raw)
    if not m:
        return None
    try:
        text = rtf_to_text("{\\rtf1 " + m.group(1) + "}", errors="replace")
    except _STRIPRTF_ERRORS:
        return None
    return " ".join(text.split()) or None


def _info_date(raw: str, name: str) -> str | None:
    m = re.search(_TIME_RE.format(name), raw)
    if not m:
        return None
    year, month, day = m.group(1), m.group(2), m.group(3)
    if not month:
        return year
    return f"{year}-{int(month):02d}" + (f"-{int(day):02d}" if day else "")


def _tables(text: str) -> str:
    """striprtf ends each table cell with "|": runs of such lines become rows with their column
    names (`_table_lines`)."""
    out: list[str] = []
    rows: list[list[str]] = []
    for line in text.split("\n") + [""]:
        if line.endswith("|"):
            rows.append([_cell(c) for c in line[:-1].split("|")])
            continue
        if rows:
            out.extend(_table_lines(rows))
            rows = []
        out.append(line)
    return "\n".join(out[:-1])


def _parse_rtf(path: Path, data: bytes) -> Document:
    if not data.lstrip()[:5] == b"{\\rtf":
        raise DocumentError(Problem.MALFORMED, "not a valid RTF file: it does not start with {\\rtf")
    from striprtf.striprtf import rtf_to_text

    encoding = _codepage(data)
    raw = data.decode(encoding, "replace")
    try:
        text = rtf_to_text(raw, encoding=encoding, errors="replace")
    except _STRIPRTF_ERRORS as exc:
        raise DocumentError(Problem.MALFORMED, f"not a valid RTF file: {_describe(exc)}") from None
    text = "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    text = _BLANKS_RE.sub("\n\n", _tables(text)).strip()
    if not text:
        raise DocumentError(Problem.NO_TEXT, "the document has no text (pictures only?)")

    metadata: dict[str, str] = {"encoding": encoding}
    _put(metadata, "author", _info(raw, "author"))
    _put(metadata, "created", _info_date(raw, "creatim"))
    _put(metadata, "modified", _info_date(raw, "revtim"))
    first_line = text.split("\n", 1)[0].strip()
    first = first_line if len(first_line) <= 100 and not first_line.endswith((".", ",", ";", ":")) else None
    title = _choose_title(path, _info(raw, "title"), first)
    texts = _resize([text])
    metadata["sections"] = str(len(texts))
    return Document(str(path), title, "rtf", [Page(i + 1, t) for i, t in enumerate(texts)], metadata)
