"""PowerPoint (.pptx), read with python-pptx. A slide is a page, numbered as the slides are (a
slide without text stays as an empty page, so page n is slide n). A page holds the slide's
title, then its text boxes, tables and charts in reading order (top to bottom, then left to
right; grouped shapes where the group stands), each a paragraph; a table's rows are lines with
their column names (`_table_lines`), a chart is its title and a line per category; then the
speaker notes after "Notes:". Slide numbers, dates and footers from the master are left out.
Title, author and dates come from the core properties; the first slide's title stands in for a
missing title.
"""

from __future__ import annotations

import io
from pathlib import Path

from edgechat.core.documents.common import (
    _cell,
    _check_not_ole,
    _check_zip_size,
    _choose_title,
    _core_properties,
    _describe,
    _iso_date,
    _put,
    _row_line,
    _safe,
    _table_lines,
)
from edgechat.core.records import Document, DocumentError, Page, Problem

NOTES_LABEL = "Notes:"


def _frame_text(frame) -> str:
    """A text frame's paragraphs, one a line (a line break inside one starts a new line)."""
    lines: list[str] = []
    for paragraph in frame.paragraphs:
        text = paragraph.text.replace("\v", "\n")
        lines.extend(" ".join(part.split()) for part in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _table_text(table) -> str:
    rows = [[_cell(cell.text) if not cell.is_spanned else "" for cell in row.cells] for row in table.rows]
    return "\n".join(_table_lines(rows))


def _chart_text(chart) -> str:
    """A chart's title, then its data: a line per category, each value led by its series' name
    ("Q2 | Revenue: 12 | Costs: 9")."""
    lines: list[str] = []
    if chart.has_title and chart.chart_title.has_text_frame:
        title = _frame_text(chart.chart_title.text_frame)
        if title:
            lines.append(title)
    for plot in chart.plots:
        categories = [_cell(c) for c in plot.categories]
        series = list(plot.series)
        if not series:
            continue
        header = [""] + [_cell(s.name) or f"Series {i + 1}" for i, s in enumerate(series)]
        values = [list(s.values) for s in series]
        for i in range(max(len(categories), max(len(v) for v in values))):
            row = [categories[i] if i < len(categories) else ""]
            row += [_number(v[i]) if i < len(v) else "" for v in values]
            if any(row[1:]):
                lines.append(_row_line(row, header))
    return "\n".join(lines)


def _number(value: object) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.12g}"
    return _cell(value)


def _skipped_placeholder(shape) -> bool:
    """Slide numbers, dates and footers: the master's furniture, not the slide's content."""
    from pptx.enum.shapes import PP_PLACEHOLDER

    if not shape.is_placeholder:
        return False
    try:
        kind = shape.placeholder_format.type
    except Exception:  # noqa: BLE001 - python-pptx on a damaged placeholder: read as content
        return False
    return kind in (PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER)


def _position(shape) -> tuple[int, int]:
    top, left = _safe(lambda: shape.top), _safe(lambda: shape.left)
    big = 1 << 40
    return (top if isinstance(top, int) else big, left if isinstance(left, int) else big)


def _shape_blocks(shapes, skip_id: int | None, out: list[str]) -> None:
    from pptx.shapes.group import GroupShape

    for shape in sorted(shapes, key=_position):
        if shape.shape_id == skip_id or _skipped_placeholder(shape):
            continue
        if isinstance(shape, GroupShape):
            _shape_blocks(shape.shapes, skip_id, out)
            continue
        try:
            text = _shape_text(shape)
        except Exception:  # noqa: BLE001 - a shape python-pptx cannot read (an odd graphic frame): the others are
            text = ""
        if text:
            out.append(text)


def _shape_text(shape) -> str:
    if getattr(shape, "has_table", False):
        return _table_text(shape.table)
    if getattr(shape, "has_chart", False):
        return _chart_text(shape.chart)
    if getattr(shape, "has_text_frame", False):
        return _frame_text(shape.text_frame)
    return ""


def _slide_text(slide) -> tuple[str, str]:
    """(the slide's page text, its title)."""
    blocks: list[str] = []
    title_shape = slide.shapes.title
    title = _frame_text(title_shape.text_frame) if title_shape is not None and title_shape.has_text_frame else ""
    if title:
        blocks.append(title)
    _shape_blocks(slide.shapes, title_shape.shape_id if title_shape is not None else None, blocks)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        notes = _frame_text(frame) if frame is not None else ""
        if notes:
            blocks.append(f"{NOTES_LABEL}\n{notes}")
    first_line = title.split("\n", 1)[0]
    return "\n\n".join(blocks), first_line if len(first_line) <= 150 else ""


def _parse_pptx(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_not_ole(path, data)
    _check_zip_size(data, max_bytes, "PowerPoint file")
    import pptx

    try:
        prs = pptx.Presentation(io.BytesIO(data))
        slides = list(prs.slides)
    except Exception as exc:  # noqa: BLE001 - PackageNotFoundError, KeyError, ValueError, XMLSyntaxError...
        raise DocumentError(Problem.MALFORMED, f"not a valid PowerPoint file: {_describe(exc)}") from None

    pages: list[Page] = []
    titles: list[str] = []
    broken = 0
    for number, slide in enumerate(slides, 1):
        try:
            text, title = _slide_text(slide)
        except Exception:  # noqa: BLE001 - one damaged slide: the others are still read
            text, title = "", ""
            broken += 1
        pages.append(Page(number, text))
        titles.append(title)
    if not any(p.text.strip() for p in pages):
        if broken:
            raise DocumentError(Problem.MALFORMED, "not a valid PowerPoint file: no slide could be read")
        raise DocumentError(Problem.NO_TEXT, "the presentation has no text (pictures only?)"
                            if pages else "the presentation has no slides")

    metadata: dict[str, str] = {}
    core = _core_properties(data)
    _put(metadata, "author", core.get("author"))
    _put(metadata, "created", _iso_date(core.get("created")))
    _put(metadata, "modified", _iso_date(core.get("modified")))
    metadata["slides"] = str(len(pages))
    if broken:
        metadata["partly_read"] = f"{broken} of {len(pages)} slides could not be read"
    title = _choose_title(path, core.get("title"), next((t for t in titles if t), None))
    return Document(str(path), title, "pptx", pages, metadata)
