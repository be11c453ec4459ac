"""Word (.docx), read with python-docx, or straight from the zip with lxml when python-docx refuses
the file (Strict OOXML, odd packages). Paragraphs, tables (cells joined by " | "), text boxes
and content controls are walked in order; headings come from paragraph styles (by name, outline
level or the style they are based on). Sections start at the top heading level that repeats,
long ones cut by size. Title, author and dates come from the core properties.
"""

from __future__ import annotations

import functools
import io
import os
import re
import zipfile
from pathlib import Path

from edgechat.core.documents.common import (
    _check_not_ole,
    _check_zip_size,
    _choose_title,
    _describe,
    _heading_sections,
    _iso_date,
    _put,
    _safe,
)
from edgechat.core.documents.titles import page_title
from edgechat.core.records import Document, DocumentError, Page, Problem


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""
    return tag[tag.rfind("}") + 1:]


def _val(el) -> str | None:
    for key, value in el.attrib.items():
        if key == "val" or key.endswith("}val"):
            return value
    return None


def _child(el, name: str):
    for c in el:
        if _local(c.tag) == name:
            return c
    return None


_SKIP_IN_PARAGRAPH = frozenset({
    "pPr", "rPr", "Fallback", "del", "moveFrom", "delText", "instrText", "fldData", "sectPr",
    "tblPr", "tcPr", "trPr", "tblGrid", "footnoteReference", "endnoteReference", "commentReference",
})


def _paragraph_text(p) -> str:
    out: list[str] = []
    stack = [iter(p)]
    while stack:
        el = next(stack[-1], None)
        if el is None:
            stack.pop()
            continue
        name = _local(el.tag)
        if not name or name in _SKIP_IN_PARAGRAPH:
            continue
        if name == "t":
            if el.text:
                out.append(el.text)
        elif name == "tab":
            out.append("\t")
        elif name in ("br", "cr"):
            out.append("\n")
        elif name == "noBreakHyphen":
            out.append("-")
        elif name == "p":  # a paragraph inside a text box
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            stack.append(iter(el))
        elif name == "tc":
            if out and not out[-1].endswith(("\n", " | ")):
                out.append(" | ")
            stack.append(iter(el))
        else:
            stack.append(iter(el))
    return "".join(out).strip()


class _DocxStyles:
    def __init__(self, root) -> None:
        self.levels: dict[str, int | None] = {}
        self.raw: dict[str, tuple[str, int | None, str | None]] = {}
        for style in root if root is not None else ():
            if _local(style.tag) != "style":
                continue
            sid = next((v for k, v in style.attrib.items() if k.endswith("styleId")), None)
            if not sid:
                continue
            name_el, based_el = _child(style, "name"), _child(style, "basedOn")
            ppr = _child(style, "pPr")
            outline = _child(ppr, "outlineLvl") if ppr is not None else None
            self.raw[sid] = (
                (_val(name_el) or "") if name_el is not None else "",
                _int(_val(outline)) if outline is not None else None,
                _val(based_el) if based_el is not None else None,
            )

    def level(self, sid: str | None) -> int | None:
        if not sid:
            return None
        if sid in self.levels:
            return self.levels[sid]
        level = None
        seen = set()
        current: str | None = sid
        while current and current not in seen and current in self.raw:
            seen.add(current)
            name, outline, based = self.raw[current]
            level = _heading_level_from_name(name) if name else None
            if level is None and current == sid:
                level = _heading_level_from_name(current)
            if level is None and outline is not None and 0 <= outline < 9:
                level = outline + 1
            if level is not None:
                break
            current = based
        if level is None and sid not in self.raw:
            level = _heading_level_from_name(sid)
        self.levels[sid] = level
        return level


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _heading_level_from_name(name: str) -> int | None:
    low = name.lower().replace(" ", "")
    if low == "title":
        return 0
    m = re.fullmatch(r"heading(\d)", low)
    return int(m.group(1)) if m else None


def _docx_blocks(container, styles: _DocxStyles, out: list[tuple[str, int | None]]) -> None:
    for el in container:
        name = _local(el.tag)
        if name == "p":
            text = _paragraph_text(el)
            if not text:
                continue
            level = None
            ppr = _child(el, "pPr")
            if ppr is not None:
                pstyle = _child(ppr, "pStyle")
                level = styles.level(_val(pstyle)) if pstyle is not None else None
                outline = _child(ppr, "outlineLvl")
                if level is None and outline is not None:
                    lvl = _int(_val(outline))
                    level = lvl + 1 if lvl is not None and 0 <= lvl < 9 else None
            out.append((text, level))
        elif name == "tbl":
            rows = _table_rows(el, styles)
            if rows:
                out.append(("\n".join(rows), None))
        elif name in ("sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag", "body"):
            _docx_blocks(el, styles, out)


def _table_rows(tbl, styles: _DocxStyles) -> list[str]:
    rows: list[str] = []
    for tr in _descend(tbl, "tr", ("sdt", "sdtContent", "customXml", "ins", "moveTo")):
        cells = []
        for tc in _descend(tr, "tc", ("sdt", "sdtContent", "customXml", "ins", "moveTo")):
            inner: list[tuple[str, int | None]] = []
            _docx_blocks(tc, styles, inner)
            cells.append(" ".join(" ".join(text.split()) for text, _ in inner))
        while cells and not cells[-1]:
            cells.pop()
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _descend(el, want: str, through: tuple[str, ...]):
    for c in el:
        name = _local(c.tag)
        if name == want:
            yield c
        elif name in through:
            yield from _descend(c, want, through)


def _parse_docx(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_not_ole(path, data)
    _check_zip_size(data, max_bytes)
    import docx

    core: dict[str, object] = {}
    try:
        doc = docx.Document(io.BytesIO(data))
    except (KeyError, ValueError) as exc:
        # python-docx reads only Transitional OOXML; Strict files (and odd packages) are read
        # straight from the zip with the same walker.
        body, styles_root, core = _docx_raw(data, exc)
    else:
        body = doc.element.body
        try:
            styles_root = doc.styles.element
        except Exception:  # noqa: BLE001 - damaged styles: the text is read without them
            styles_root = None
        try:
            cp = doc.core_properties
            for key in ("title", "author", "created", "modified"):
                core[key] = _safe(functools.partial(getattr, cp, key))
        except Exception:  # noqa: BLE001 - damaged core properties: read without them
            pass
    blocks: list[tuple[str, int | None]] = []
    _docx_blocks(body, _DocxStyles(styles_root), blocks)
    if not any(text.strip() for text, _ in blocks):
        raise DocumentError(Problem.NO_TEXT, "the document has no text (pictures only?)")

    metadata: dict[str, str] = {}
    core_title = core.get("title")
    _put(metadata, "author", core.get("author"))
    _put(metadata, "created", _iso_date(core.get("created")))
    _put(metadata, "modified", _iso_date(core.get("modified")))
    first_heading = next((text for text, level in blocks if level is not None), None)
    texts = _heading_sections(blocks)
    title = _choose_title(path, core_title, first_heading, page_title(texts[0] if texts else "", path.stem))

    pages = [Page(i + 1, text) for i, text in enumerate(texts)]
    metadata["sections"] = str(len(pages))
    return Document(str(path), title, "docx", pages, metadata)


def _docx_raw(data: bytes, error: Exception):
    """(body element, styles root, core properties) of a Word file python-docx refused."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())

        def part(name: str | None):
            if not name or name not in names:
                return None
            return etree.fromstring(zf.read(name), parser)

        def rels(source: str) -> dict[str, str]:
            folder, _, base = source.rpartition("/")
            root = part(f"{folder}/_rels/{base}.rels" if folder else f"_rels/{base}.rels")
            found: dict[str, str] = {}
            for rel in root if root is not None else ():
                kind, target = rel.get("Type", ""), rel.get("Target", "")
                if rel.get("TargetMode") == "External" or not target:
                    continue
                target = target.lstrip("/") if target.startswith("/") else \
                    "/".join(x for x in (folder, target) if x)
                found.setdefault(kind.rsplit("/", 1)[-1], os.path.normpath(target).replace(os.sep, "/"))
            return found

        main = rels("").get("officeDocument") if "_rels/.rels" in names else None
        root = part(main or "word/document.xml")
        if root is None:
            raise DocumentError(Problem.MALFORMED, f"not a Word document: {_describe(error)}")
        body = next((c for c in root if _local(c.tag) == "body"), None)
        if body is None:
            raise DocumentError(Problem.MALFORMED, "the Word document has no body")
        styles = part(rels(main or "word/document.xml").get("styles"))
        core: dict[str, object] = {}
        props = part(rels("").get("core-properties") if "_rels/.rels" in names else None)
        for el in props if props is not None else ():
            key = {"title": "title", "creator": "author", "created": "created", "modified": "modified"}.get(
                _local(el.tag))
            if key and el.text:
                core[key] = el.text.strip()
    return body, styles, core
