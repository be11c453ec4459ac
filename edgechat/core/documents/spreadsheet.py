"""Spreadsheets: Excel workbooks (.xlsx, .xlsm; openpyxl in read-only mode, formulas as the values
Excel last computed and saved) and CSV/TSV files (the stdlib csv module; the encoding found as
for a text file, the delimiter sniffed).

A page is a sheet, or for a long sheet a run of whole rows of about `SECTION_CHARS` characters.
Empty sheets give no page; pages are numbered 1..n in workbook order. A workbook page's first
line names its sheet ("Sheet: Revenue", then ", rows 41-80" when the sheet takes several pages;
a long CSV's pages start with "Rows 41-80"). Each row with anything in it is a line. Under a
header row (the first row, or one after a blank row, whose cells are labels or years) every cell
is led by its column's name: "Region: North | 2022: 1180 | 2023: 1234", so a value is found by
its column's name on whatever page its row lands; the header row itself is a line of its own.
Numbers keep their percent sign and thousands separators when the cell's format shows them.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from edgechat.core.documents.common import (
    SECTION_CHARS,
    _cell,
    _check_not_ole,
    _check_zip_size,
    _choose_title,
    _core_properties,
    _decode,
    _describe,
    _is_header_row,
    _iso_date,
    _put,
    _row_line,
)
from edgechat.core.records import Document, DocumentError, Page, Problem

_LOOKAHEAD = 50  # rows searched for the first row under a candidate header


def _merged_header(upper: list[str], lower: list[str]) -> list[str]:
    """Column names from two header rows: a name over several columns (a merged cell: "2023" over
    "Q1", "Q2") is carried right over the empty cells after it, from the second column on."""
    width = max(len(upper), len(lower))
    upper = upper + [""] * (width - len(upper))
    lower = lower + [""] * (width - len(lower))
    names = []
    carry = ""
    for k in range(width):
        if upper[k]:
            top = upper[k]
            carry = top if k >= 1 else ""
        else:
            top = carry if lower[k] else ""
        names.append(" ".join(x for x in (top, lower[k]) if x))
    return names


def _sheet_lines(rows: Sequence[tuple[int, list[str]]]) -> list[tuple[int, str]]:
    """(row number, line) for every row with anything in it, data rows led by column names."""
    out: list[tuple[int, str]] = []
    header: list[str] | None = None
    fresh = True  # at the top, or after a blank row: a header row may start a new table here
    done = -1  # index of the last row already taken (a second header row)
    for i, (number, cells) in enumerate(rows):
        if i <= done:
            continue
        filled = sum(1 for c in cells if c)
        if not filled:
            fresh = True
            continue
        if fresh and filled >= 2 and _is_header_row(cells):
            after = [(i + 1 + k, c) for k, (_, c) in enumerate(rows[i + 1:i + 1 + _LOOKAHEAD]) if any(c)][:2]
            # a second header row under this one (quarters under their years), then data
            two = len(after) == 2 and _is_header_row(after[0][1], distinct=False) \
                and not _is_header_row(after[1][1], distinct=False)
            if after and (header is None or two or not _is_header_row(after[0][1])):
                header, fresh = cells, False
                out.append((number, _row_line(cells, None)))
                if two:
                    j, lower = after[0]
                    header = _merged_header(cells, lower)
                    out.append((rows[j][0], _row_line(lower, None)))
                    done = j
                continue
        if filled >= 2:
            fresh = False
        out.append((number, _row_line(cells, header)))
    return out


def _pages_of(name: str | None, lines: list[tuple[int, str]]) -> list[str]:
    """A sheet's lines cut into pages of whole rows of about SECTION_CHARS characters, each led by
    the sheet's name (when it has one) and, when there are several, the rows it holds."""
    groups: list[list[tuple[int, str]]] = [[]]
    size = 0
    for number, line in lines:
        if groups[-1] and size + len(line) + 1 > SECTION_CHARS:
            groups.append([])
            size = 0
        groups[-1].append((number, line))
        size += len(line) + 1
    pages = []
    for group in groups:
        if not group:
            continue
        label = f"Sheet: {name}" if name else ""
        if len(groups) > 1:
            first, last = group[0][0], group[-1][0]
            span = f"rows {first}-{last}" if last > first else f"row {first}"
            label = f"{label}, {span}" if label else span.capitalize()
        pages.append("\n".join(([label] if label else []) + [line for _, line in group]))
    return pages


# --------------------------------------------------------------------------- Excel

_DECIMALS_RE = re.compile(r"0\.(0+)")
_QUOTED_RE = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')


def _number_text(value: float | int, number_format: str | None) -> str:
    """A number as its cell shows it, as far as the format's percent sign, thousands separator
    and decimal places go; otherwise as Excel's General format would."""
    fmt = _QUOTED_RE.sub("", (number_format or "General").split(";")[0])
    if fmt == "General" or not any(ch in fmt for ch in "0#") or any(ch in fmt for ch in "?/Ee"):  # fractions, 1E+06
        if isinstance(value, float):
            return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.12g}"
        return str(value)
    percent = "%" in fmt
    if percent:
        value = value * 100
    m = _DECIMALS_RE.search(fmt)
    places = len(m.group(1)) if m else 0
    grouping = "," if "#,#" in fmt or ",0" in fmt else ""
    return f"{value:{grouping}.{places}f}" + ("%" if percent else "")


def _excel_value(value: object, number_format: str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return _number_text(value, number_format)
    if isinstance(value, _dt.datetime):
        if value.time() == _dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.second else "minutes")
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    return _cell(value)


def _parse_xlsx(path: Path, data: bytes, max_bytes: int) -> Document:
    _check_not_ole(path, data)
    _check_zip_size(data, max_bytes, "Excel file")
    import openpyxl

    try:
        wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - InvalidFileException, KeyError, zip and XML errors...
        raise DocumentError(Problem.MALFORMED, f"not a valid Excel file: {_describe(exc)}") from None
    try:
        texts: list[str] = []
        sheets = 0
        for ws in wb.worksheets:
            sheets += 1
            ws.reset_dimensions()  # the stored size can be wrong; read the cells that are there
            rows = [
                (number, [_excel_value(c.value, c.number_format) for c in row])
                for number, row in enumerate(ws.iter_rows(), 1)
            ]
            texts.extend(_pages_of(ws.title, _sheet_lines(rows)))
    except DocumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged sheet fails in many ways inside openpyxl
        raise DocumentError(Problem.MALFORMED, f"not a valid Excel file: {_describe(exc)}") from None
    finally:
        wb.close()
    if not texts:
        raise DocumentError(Problem.NO_TEXT, "the workbook's sheets are empty" if sheets else "the workbook has no sheets")

    metadata: dict[str, str] = {}
    core = _core_properties(data)
    _put(metadata, "author", core.get("author"))
    _put(metadata, "created", _iso_date(core.get("created")))
    _put(metadata, "modified", _iso_date(core.get("modified")))
    metadata["sheets"] = str(sheets)
    metadata["sections"] = str(len(texts))
    title = _choose_title(path, core.get("title"))
    return Document(str(path), title, "xlsx", [Page(i + 1, t) for i, t in enumerate(texts)], metadata)


# --------------------------------------------------------------------------- CSV

_DELIMITERS = ",;\t|"
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


def _delimiter(text: str, suffix: str) -> str:
    """The delimiter csv.Sniffer finds in the first lines (one of , ; tab |), else the suffix's."""
    default = "\t" if suffix == ".tsv" else ","
    sample = text[:32768]
    if len(text) > len(sample) and "\n" in sample:
        sample = sample[: sample.rfind("\n")]
    try:
        found = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return default
    first = next((ln for ln in sample.splitlines() if ln.strip()), "")
    if found not in first and default in first:
        return default
    return found


def _parse_csv(path: Path, data: bytes) -> Document:
    text, encoding = _decode(data)
    if not text.strip():
        raise DocumentError(Problem.EMPTY, "only whitespace")
    delimiter = _delimiter(text, path.suffix.lower())
    try:
        records: Iterable[list[str]] = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        rows = [(number, [_cell(c) for c in record]) for number, record in enumerate(records, 1)]
    except csv.Error as exc:
        raise DocumentError(Problem.MALFORMED, f"not a valid CSV file: {_describe(exc)}") from None
    texts = _pages_of(None, _sheet_lines(rows))
    if not texts:
        raise DocumentError(Problem.EMPTY, "no values")
    metadata = {"encoding": encoding, "delimiter": _DELIMITER_NAMES.get(delimiter, delimiter),
                "rows": str(len(rows)), "sections": str(len(texts))}
    return Document(str(path), _choose_title(path), "csv", [Page(i + 1, t) for i, t in enumerate(texts)], metadata)
