"""Table rows as a PDF's text gives them, and which column of a row a figure is from.

A filing's table row holds several figures ("Operating income 3,669 4,774 12,233 10,488"); its
column headings, above it, say which is which ("Three Months Ended ... Six Months Ended", "March 31,
2022 2023"). A claim about a quarter of a year is supported by the figure of that column only. The
headings are read from the lines above the row, or, for a passage that begins below them, from the
table's headings on its page (Source.table_header).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from edgechat.core.answering.wording import _FIGURE_RE, _YEAR_RE, _norm_figure

__all__ = ["HEADING_WORDS", "column_headings", "is_figure_row", "right_columns", "row_cells", "row_label",
           "total_of_a_named_part"]

# A table row as a PDF's text gives it: a label, then two or more figures ("iPhone $ 39,669
# $ 40,665", "Other income/(expense), net (265) (10)", "Services 21,213 19,604 8 %").
_FIGURE_CELL_RE = re.compile(r"^\(?[-\u2212]?\$?\d(?:[\d,]*\d)?(?:\.\d+)?\)?%?$")
_CELL_FILLER = frozenset({"$", "%", "\u2014", "\u2013", "-", "(", ")", "|"})  # "|": Markdown and Word tables


def is_figure_row(line: str) -> bool:
    """Is `line` a table row of figures: a label with a word in it, then at least two figure
    cells (not all of them years), and nothing else?"""
    label = row_label(line)
    figures = [t for t in line.split()[len(label.split()):] if t not in _CELL_FILLER]
    if len(figures) < 2 or all(_YEAR_RE.fullmatch(t) for t in figures):
        return False
    return any(sum(ch.isalpha() for ch in w) >= 2 for w in label.split())


def row_label(row: str) -> str:
    """A table row's label: its words before the figures ("Research and development")."""
    tokens = row.split()
    i = len(tokens)
    while i > 0 and (tokens[i - 1] in _CELL_FILLER or _FIGURE_CELL_RE.match(tokens[i - 1])):
        i -= 1
    return " ".join(tokens[:i])


def row_cells(row: str) -> str:
    """A table row's figures: its text after the label ("$ 7,709 $ 6,306")."""
    label = row_label(row)
    return " ".join(row.split()[len(label.split()):])


def total_of_a_named_part(label: set[str], said: set[str], labels: Sequence[set[str]]) -> bool:
    """Is the row labelled `label` (its terms) a table's total ("Total net sales") while `said` (a
    question's or a claim's terms) names one of its parts whole: another of the table's row
    `labels`, not a total ("Services net sales": the Services row)?"""
    return "total" in label and "total" not in said and any(
        other and "total" not in other and not other <= label and other <= said for other in labels)


_HEADING_YEAR_RE = re.compile(r"(?<![\d,.])(?:19|20)\d\d(?!\d)")
HEADING_WORDS = 8  # a line of column headings is short
_FOOTNOTE_RE = re.compile(r"^(?:\(\d\)\s*)+")  # a footnote's mark after a row's label
_GROUP_RE = re.compile(r"\b(three|six|nine|twelve) months ended\b", re.IGNORECASE)


def column_headings(texts: Sequence[str], cap: int | None, row: int, above: str = "") -> tuple[str, list[str]]:
    """The column headings of row `row` of a passage's sentences `texts` (`cap`: the index of its
    table's caption, if any), and the row's figure cells, as a claim's figures are written. The
    headings name a year per column ("July 1, 2023 June 25, 2022 ..." or "2022 2023"): they are
    the lines between the caption and the row, else the nearest of them, else `above` (the
    headings of the table a passage begins inside of, Source.table_header), else a caption that
    names one date per column ("... ended December 31, 2022 and December 25, 2021 were as
    follows"). "" when no text names as many years as the row has figures."""
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
    cells_text = _FOOTNOTE_RE.sub("", row_cells(texts[row]))  # "Online stores (1) $ 51,129 $ 51,096"
    found = [m for m in _FIGURE_RE.finditer(cells_text)  # a year is no cell; "1,910" is not a year
             if "," in m.group(1) or not _YEAR_RE.fullmatch(_norm_figure(m))]
    cells = [_norm_figure(m) for m in found]
    # without a "Change" column's percentages ("5 %", "(4)%")
    amounts = [_norm_figure(m) for m in found if not m.group(3) and not cells_text.startswith(")%", m.end())]
    years_said = max(len(_HEADING_YEAR_RE.findall(t)) for t in (" ".join(lines), above))
    if len(amounts) != len(cells) and len(amounts) == years_said:
        cells = amounts
    tries = [" ".join(lines[i:]) for i in range(len(lines))] + [above, texts[cap] if cap is not None else ""]
    return next((" ".join(t.split()) for t in tries
                 if len(_HEADING_YEAR_RE.findall(t)) == len(cells) and _only_dates(t)), ""), cells


def _only_dates(text: str) -> bool:
    """Are the only figures of `text` years and days of a month, as in column headings? Headings
    found on the page may run on into the table's first rows ("... 2022 Cash, cash equivalents and
    restricted cash, beginning balances $ 24,977 $ 35,929"): those are not headings."""
    return all(_YEAR_RE.fullmatch(f) or (f.isdigit() and int(f) <= 31)
               for f in (_norm_figure(m) for m in _FIGURE_RE.finditer(text)))


def right_columns(texts: Sequence[str], cap: int | None, row: int, claim_figures: set[str], years: set[str],
                   latest: bool, above: str = "", told: bool = False, span: str | None = None,
                   said: str = "") -> bool:  # fmt: skip
    """Is each claimed figure of row `row` in a column of a year asked about? The column
    headings (`column_headings`, `above` among them) name a year per column. `told`: False as
    well when the headings do not tell each column's year.

    Headings that group the columns ("Three Months Ended ... Six Months Ended ...") tell the
    quarter's columns from the half-year's: a claim about a quarter (`span` "three") takes its
    figure from the first kind, one about six months from the second. `said`: the claim, which may
    be the row quoted word for word."""
    if said and " ".join(texts[row].split()) in " ".join(said.split()):
        return True  # the row quoted whole, every column: no one column is claimed
    heading_text, cells = column_headings(texts, cap, row, above)
    heading = _HEADING_YEAR_RE.findall(heading_text)
    if not heading:
        # No year per column to go by: a claim about a period cannot be held to one of a row's
        # several figures ("Stock-based compensation 5,209 7,127 8,459 ..." under headings the
        # passage does not have).
        return not told and not ((years or span) and len(set(cells)) > 1)
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
