"""EPUB, read with ebooklib: one section per spine item (every document item when the spine is
empty), each chapter's XHTML turned into text by the HTML parser's walker. Title, author, date,
language and publisher come from the Dublin Core metadata; the first h1 stands in for a title.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

from edgechat.core.documents.common import _check_zip_size, _choose_title, _describe, _iso_date, _meaningful, _put
from edgechat.core.documents.html import _first_h1, _html_sections, _soup
from edgechat.core.records import Document, DocumentError, Page, Problem

warnings.filterwarnings("ignore", module=r"ebooklib(\.|$)")

_HTML_MEDIA = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")


def _parse_epub(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_zip_size(data, max_bytes)
    import ebooklib
    from ebooklib import epub

    try:
        book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})
    except (epub.EpubException, KeyError) as exc:
        raise DocumentError(Problem.MALFORMED, f"not a valid EPUB: {_describe(exc)}") from None

    items = []
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, (tuple, list)) else entry
        item = book.get_item_with_id(idref)
        if item is not None:
            items.append(item)
    if not items:
        items = list(book.get_items_of_type(ebooklib.ITEM_DOCUMENT))

    pages: list[Page] = []
    first_h1 = None
    for item in items:
        text = ""
        media = (getattr(item, "media_type", "") or "").lower()
        if media in _HTML_MEDIA or isinstance(item, epub.EpubHtml):
            content = item.get_content()
            if content and content.strip():
                soup = _soup(content)
                if first_h1 is None:
                    first_h1 = _meaningful(_first_h1(soup))
                text = "\n\n".join(s for s in _html_sections(soup) if s.strip())
        pages.append(Page(len(pages) + 1, text))
    if not any(p.text.strip() for p in pages):
        raise DocumentError(Problem.NO_TEXT, "the book has no text")

    def dc(name: str) -> list[str]:
        try:
            values = book.get_metadata("DC", name)
        except KeyError:  # no metadata in that namespace
            return []
        return [str(v[0]).strip() for v in values if v and v[0] and str(v[0]).strip()]

    metadata: dict[str, str] = {}
    titles = dc("title")
    _put(metadata, "author", ", ".join(dict.fromkeys(dc("creator"))) or None)
    dates = dc("date")
    _put(metadata, "created", (_iso_date(dates[0]) or dates[0]) if dates else None)
    langs = dc("language")
    _put(metadata, "language", langs[0] if langs else None)
    publishers = dc("publisher")
    _put(metadata, "publisher", publishers[0] if publishers else None)
    metadata["sections"] = str(len(pages))
    title = _choose_title(path, titles[0] if titles else None, first_h1)
    return Document(str(path), title, "epub", pages, metadata)
