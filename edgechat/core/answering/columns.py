"""Which column of a table row a figure is from.

A filing's table row holds several figures ("Operating income 3,669 4,774 12,233 10,488"); its
column headings, above it, say which is which ("Three Months Ended ... Six Months Ended", "March 31,
2022 2023"). A claim about a quarter of a year is supported by the figure of that column only. The
headings are read from the lines above the row, or, for a passage that begins below them, from the
table's headings on its page (Source.table_header).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from edgechat.core.answering.extractive import is_figure_row, row_cells
from edgechat.core.answering.wording import _FIGURE_RE, _YEAR_RE, _norm_figure

__all__ = ["HEADING_WORDS", "right_columns"]

_HEADING_YEAR_RE = re.compile(r"(?<![\d,.])(?:19|20)\d\d(?!\d)")
HEADING_WORDS = 8  # a line of column headings is short
_GROUP_RE = re.compile(r"\b(three|six|nine|twelve) months ended\b", re.IGNORECASE)


def right_columns(texts: Sequence[str], cap: int | None, row: int, claim_figures: set[str], years: set[str],
                   latest: bool, above: str = "", told: bool = False, span: str | None = None,
                   said: str = "") -> bool:  # fmt: skip
    """Is each claimed figure of row `row` in a column of a year asked about? The column
    headings are the lines between the caption and the row; they name a year per column
    ("July 1, 2023 June 25, 2022 ..." or "2022 2023") when there are as many years as figures.
    A passage that begins inside a table, or inside its headings, lacks some of them: then they
    are `above`, the headings of the table it starts in (Source.table_header). `told`: False as
    well when the headings do not tell each column's year.

    Headings that group the columns ("Three Months Ended ... Six Months Ended ...") tell the
    quarter's columns from the half-year's: a claim about a quarter (`span` "three") takes its
    figure from the first kind, one about six months from the second. `said`: the claim, which may
    be the row quoted word for word."""
    start = cap + 1 if cap is not None else max(0, row - 12)
    lines = [t for t in texts[start:row] if not is_figure_row(" ".join(t.split()))]
    if cap is not None and not any(_HEADING_YEAR_RE.search(t) for t in lines) and _HEADING_YEAR_RE.search(
            texts[cap].rsplit(")", 1)[-1]):
        lines = [texts[cap].rsplit(")", 1)[-1]]  # "(In millions ...) Three Months Ended ... 2022 Net sales:"
    if cap is not None and not any(_HEADING_YEAR_RE.search(t) for t in lines):
        # The "caption" is a sub-heading of the statement ("Operating expenses:"): the column
        # headings are the short lines above it ("Three Months Ended", "March 31,", "2022 2023"),
        # up to the sentence before the table.
        for t in reversed(texts[max(0, cap - 12):cap]):
            line = " ".join(t.split())
            if is_figure_row(line):
                continue
            if line.endswith(".") or len(line.split()) > HEADING_WORDS:
                break
            lines.insert(0, line)
    found = [m for m in _FIGURE_RE.finditer(row_cells(texts[row])) if not _YEAR_RE.fullmatch(_norm_figure(m))]
    cells = [_norm_figure(m) for m in found]
    if said and " ".join(texts[row].split()) in " ".join(said.split()):
        return True  # the row quoted whole, every column: no one column is claimed
    amounts = [_norm_figure(m) for m in found if not m.group(3)]  # without a "Change" column's percentages
    years_said = max(len(_HEADING_YEAR_RE.findall(t)) for t in (" ".join(lines), above))
    if len(amounts) != len(cells) and len(amounts) == years_said:
        cells = amounts
    heading_text = ""
    for text in (" ".join(lines), above):
        if len(_HEADING_YEAR_RE.findall(text)) == len(cells):
            heading_text = text
            break
    heading = _HEADING_YEAR_RE.findall(heading_text)
    if not heading:
        return not told  # no year per column to go by
    groups = [g.lower() for g in _GROUP_RE.findall(heading_text)]
    per = len(cells) // len(groups) if len(groups) > 1 and len(cells) % len(groups) == 0 else 0
    group = [groups[i // per] if per else "" for i in range(len(cells))]
    # A fiscal year ends after the calendar one its columns are dated by: Apple's Q1 2023 is the
    # quarter "Three Months Ended December 31, 2022", the latest column.
    fiscal = any(y.isdigit() and int(y) == int(max(heading)) + 1 for y in years)
    wanted = years & set(heading) or ({max(heading)} if latest or fiscal else set())
    spans = span if per and span in groups else None
    if not wanted and not spans:
        return not told
    return all(any(c == f and (not wanted or y in wanted) and (not spans or g == spans)
                   for c, y, g in zip(cells, heading, group))
               for f in claim_figures if not _YEAR_RE.fullmatch(f))
