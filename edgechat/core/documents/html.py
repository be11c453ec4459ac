"""HTML and XHTML, read with BeautifulSoup (lxml): block-aware text without scripts, styles,
navigation or media, one section per h1/h2 heading, long sections cut by size. The title is the
<title>, else the first h1; author and dates come from <meta> tags. The EPUB parser reads its
chapters with the same walker.
"""

from __future__ import annotations

import re
from pathlib import Path

from edgechat.core.documents.common import _choose_title, _iso_date, _put, _resize
from edgechat.core.records import Document, DocumentError, Page, Problem

_DROP_TAGS = frozenset({
    "script", "style", "nav", "noscript", "template", "head", "svg", "iframe", "object", "embed",
    "canvas", "select", "button", "map", "audio", "video",
})
_BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main",
    "menu", "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "ul", "tr",
    "option", "frameset", "noframes",
})
_SECTION_TAGS = frozenset({"h1", "h2"})
_WS_RE = re.compile(r"\s+")


class _HtmlText:
    """Block-aware text of an HTML tree, split into sections at h1/h2."""

    def __init__(self) -> None:
        self.sections: list[list[tuple[str, str]]] = [[]]  # (kind, text) blocks
        self.buf: list[str] = []
        self.pre = 0
        self.row_cells = 0
        self.kind = "block"

    def flush(self) -> None:
        if not self.buf:
            return
        raw = "".join(self.buf)
        self.buf.clear()
        if self.pre:
            text = raw.strip("\n").rstrip()
        else:
            text = "\n".join(" ".join(line.split()) for line in raw.split("\n")).strip("\n")
            text = re.sub(r"\n{2,}", "\n", text)
        if text.strip():
            self.sections[-1].append((self.kind, text))

    def walk(self, root: object) -> list[str]:
        from bs4.element import CData, NavigableString, PreformattedString, Tag

        stack: list[tuple[object, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if isinstance(node, Tag):
                name = (node.name or "").lower()
                if leaving:
                    self.leave(name)
                    continue
                if name in _DROP_TAGS:
                    continue
                self.enter(name)
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.contents))
            elif isinstance(node, NavigableString):
                if isinstance(node, PreformattedString) and not isinstance(node, CData):
                    continue  # comments, doctype, processing instructions
                s = str(node)
                self.buf.append(s if self.pre else _WS_RE.sub(" ", s))
        self.flush()
        out = []
        for blocks in self.sections:
            parts: list[str] = []
            prev_kind = ""
            for kind, text in blocks:
                if parts:
                    parts.append("\n" if kind == prev_kind and kind in ("row", "item") else "\n\n")
                parts.append(text)
                prev_kind = kind
            out.append("".join(parts))
        return out

    def enter(self, name: str) -> None:
        if name == "br":
            self.buf.append("\n")
        elif name == "pre":
            self.flush()
            self.pre += 1
            self.kind = "block"
        elif name in ("td", "th"):
            if self.row_cells:
                self.buf.append(" | ")
            self.row_cells += 1
        elif name in _BLOCK_TAGS and not self.pre:
            self.flush()
            if name in _SECTION_TAGS and self.sections[-1]:
                self.sections.append([])
            self.kind = "row" if name == "tr" else "item" if name == "li" else "block"
            if name == "tr":
                self.row_cells = 0

    def leave(self, name: str) -> None:
        if name == "pre":
            self.flush()
            self.pre = max(0, self.pre - 1)
            self.kind = "block"
        elif name in _BLOCK_TAGS and not self.pre:
            self.flush()
            self.kind = "block"


def _soup(data: bytes | str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(data, "lxml")


def _html_sections(soup) -> list[str]:
    root = soup.body or soup
    return _HtmlText().walk(root)


def _first_h1(soup) -> str | None:
    h1 = soup.find("h1")
    return h1.get_text(" ", strip=True) if h1 is not None else None


def _parse_html(path: Path, data: bytes) -> Document:
    soup = _soup(data)
    title_tag = soup.find("title")
    title = _choose_title(
        path, title_tag.get_text(" ", strip=True) if title_tag is not None else None, _first_h1(soup)
    )
    sections = [s for s in _html_sections(soup) if s.strip()]
    if not sections:
        raise DocumentError(Problem.NO_TEXT, "the page has no text")
    pieces = _resize(sections)
    pages = [Page(i + 1, text) for i, text in enumerate(pieces)]
    metadata: dict[str, str] = {"sections": str(len(pages))}
    for name, key in (("author", "author"), ("dcterms.created", "created"), ("dcterms.modified", "modified")):
        tag = soup.find("meta", attrs={"name": name})
        if tag is not None and tag.get("content"):
            _put(metadata, key, _iso_date(tag["content"]) if key != "author" else tag["content"])
    return Document(str(path), title, "html", pages, metadata)
