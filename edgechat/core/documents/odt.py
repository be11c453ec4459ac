"""OpenDocument text (.odt), read with odfpy. Headings, paragraphs and list items are walked in
order (inside sections and text boxes too), each a block; a table is a block of rows, one a line,
with their column names (`_table_lines`). Tracked deletions, notes, annotations and generated
indexes (table of contents, alphabetical index) are left out. Sections start at the top heading
level that repeats, as for Word, long ones cut by size. Title, author, dates and language come
from meta.xml; the first heading stands in for a missing title.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from edgechat.core.documents.common import (
    _cell,
    _check_zip_size,
    _choose_title,
    _describe,
    _heading_sections,
    _iso_date,
    _put,
    _table_lines,
)
from edgechat.core.documents.titles import page_title
from edgechat.core.records import Document, DocumentError, Page, Problem

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"

# left out wherever they are: notes and comments (not the running text), deleted text kept for
# change tracking, generated indexes (repeat the headings), declarations (no text)
_SKIP = {
    (_TEXT, "note"), (_TEXT, "tracked-changes"), (_TEXT, "table-of-content"), (_TEXT, "alphabetical-index"),
    (_TEXT, "illustration-index"), (_TEXT, "table-index"), (_TEXT, "object-index"), (_TEXT, "user-index"),
    (_TEXT, "sequence-decls"), (_TEXT, "variable-decls"), (_TEXT, "user-field-decls"), (_TEXT, "dde-connection-decls"),
    (_OFFICE, "annotation"), (_OFFICE, "annotation-end"), (_OFFICE, "forms"), (_TABLE, "table-columns"),
    (_TABLE, "table-column"), (_TABLE, "table-column-group"), (_DRAW, "image"),
}
_MAX_REPEAT = 100  # a cell or row repeated to the sheet's edge is counted once when empty


def _elements(el):
    for n in el.childNodes:
        if n.nodeType == n.ELEMENT_NODE and n.qname not in _SKIP:
            yield n


def _inline(el, out: list[str]) -> None:
    """The text of a paragraph or heading: spans, links, spaces (text:s), tabs, line breaks;
    a paragraph nested in it (a text box in a frame) on lines of its own."""
    for n in el.childNodes:
        if n.nodeType == n.TEXT_NODE:
            out.append(n.data)
            continue
        if n.nodeType != n.ELEMENT_NODE or n.qname in _SKIP:
            continue
        ns, name = n.qname
        if ns == _TEXT and name == "s":
            out.append(" " * _int(n.attributes.get((_TEXT, "c")), 1))
        elif ns == _TEXT and name == "tab":
            out.append("\t")
        elif ns == _TEXT and name == "line-break":
            out.append("\n")
        elif ns == _TEXT and name in ("p", "h"):
            out.append("\n")
            _inline(n, out)
            out.append("\n")
        else:
            _inline(n, out)


def _int(value: object, default: int) -> int:
    try:
        return max(1, int(str(value)))
    except (TypeError, ValueError):
        return default


def _paragraph(el) -> str:
    out: list[str] = []
    _inline(el, out)
    lines = (" ".join(line.split()) for line in "".join(out).split("\n"))
    return "\n".join(line for line in lines if line)


def _table_rows(table) -> list[list[str]]:
    rows: list[list[str]] = []
    for n in _elements(table):
        ns, name = n.qname
        if ns != _TABLE:
            continue
        if name == "table-row":
            cells: list[str] = []
            for c in _elements(n):
                if c.qname[0] != _TABLE or c.qname[1] not in ("table-cell", "covered-table-cell"):
                    continue
                blocks: list[tuple[str, int | None]] = []
                _blocks(c, blocks)
                text = _cell(" ".join(t for t, _ in blocks))
                repeat = _int(c.attributes.get((_TABLE, "number-columns-repeated")), 1)
                cells.extend([text] * (repeat if text else min(repeat, _MAX_REPEAT)))
            repeat = _int(n.attributes.get((_TABLE, "number-rows-repeated")), 1)
            rows.extend([cells] * (min(repeat, _MAX_REPEAT) if any(cells) else 1))
        elif name in ("table-header-rows", "table-rows", "table-row-group"):
            rows.extend(_table_rows(n))
    return rows


def _blocks(container, out: list[tuple[str, int | None]]) -> None:
    """(text, heading level or None) for every paragraph, heading and table under `container`."""
    for n in _elements(container):
        ns, name = n.qname
        if ns == _TEXT and name == "h":
            text = _paragraph(n)
            if text:
                level = _int(n.attributes.get((_TEXT, "outline-level")), 1)
                out.append((text, level))
        elif ns == _TEXT and name == "p":
            text = _paragraph(n)
            if text:
                out.append((text, None))
        elif ns == _TABLE and name == "table":
            lines = _table_lines(_table_rows(n))
            if lines:
                out.append(("\n".join(lines), None))
        else:  # lists, list items, sections, frames, text boxes...
            _blocks(n, out)


def _meta(doc) -> dict[str, str]:
    names = {"title": "title", "creator": "author", "initial-creator": "initial-creator",
             "creation-date": "created", "date": "modified", "language": "language"}
    found: dict[str, str] = {}
    for n in _elements(doc.meta):
        key = names.get(n.qname[1])
        text = _paragraph(n) if key else ""
        if key and text and key not in found:
            found[key] = text
    return found


def _parse_odt(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_zip_size(data, max_bytes, "OpenDocument text file")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())
        manifest = zf.read("META-INF/manifest.xml") if "META-INF/manifest.xml" in names else b""
    if b"encryption-data" in manifest:
        raise DocumentError(Problem.UNSUPPORTED, "encrypted OpenDocument file (password-protected): "
                                                 "save a copy without the password to index it")
    if "content.xml" not in names:
        raise DocumentError(Problem.MALFORMED, "not a valid OpenDocument text file: it has no content.xml")
    from odf.opendocument import load

    try:
        doc = load(io.BytesIO(data))
        # the body's office:text (odfpy's doc.text is the body's first child, which can be a
        # line break between elements)
        text = next((n for n in _elements(doc.body) if n.qname == (_OFFICE, "text")), None)
        blocks: list[tuple[str, int | None]] = []
        if text is not None:
            _blocks(text, blocks)
        meta = _meta(doc)
    except Exception as exc:  # noqa: BLE001 - SAXParseException, KeyError, odfpy's own errors
        raise DocumentError(Problem.MALFORMED, f"not a valid OpenDocument text file: {_describe(exc)}") from None
    if text is None:
        kind = next((n.qname[1] for n in _elements(doc.body)), "nothing")
        raise DocumentError(Problem.MALFORMED, f"not an OpenDocument text file (it holds a {kind})")
    if not blocks:
        raise DocumentError(Problem.NO_TEXT, "the document has no text (pictures only?)")

    metadata: dict[str, str] = {}
    _put(metadata, "author", meta.get("author") or meta.get("initial-creator"))
    _put(metadata, "created", _iso_date(meta.get("created")))
    _put(metadata, "modified", _iso_date(meta.get("modified")))
    _put(metadata, "language", meta.get("language"))
    first_heading = next((text for text, level in blocks if level is not None), None)
    texts = _heading_sections(blocks)
    title = _choose_title(path, meta.get("title"), first_heading, page_title(texts[0] if texts else "", path.stem))
    metadata["sections"] = str(len(texts))
    return Document(str(path), title, "odt", [Page(i + 1, t) for i, t in enumerate(texts)], metadata)
