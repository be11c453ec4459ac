"""How one answer is laid out in the transcript: its Markdown blocks (edgechat.ui.markdown) written
at a cursor, accepted markers as chips, and the map from the answer's character offsets to
document positions (`AnswerMap`) that highlights and unsupported marks rely on. The view
(edgechat.ui.transcript) owns the document; this module only writes into it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
    QTextFrameFormat,
    QTextLength,
    QTextList,
    QTextListFormat,
    QTextTableFormat,
)

from edgechat.core.engine import marker_spans
from edgechat.ui import markdown

CHIP_TYPE = int(QTextFormat.ObjectTypes.UserObject) + 7
CHIP_NUMBER = int(QTextFormat.Property.UserProperty) + 1
CHIP_TURN = int(QTextFormat.Property.UserProperty) + 2
CHIP_ADDED = int(QTextFormat.Property.UserProperty) + 3  # EdgeChat added the marker, the writer did not
CHIP_WRONG = int(QTextFormat.Property.UserProperty) + 4  # the writer's marker; that source does not say the sentence
OBJECT_CHAR = "\ufffc"


def tint(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


def wrong_marker(turn: Any, number: int, occurrence: int) -> bool:
    """Is the `occurrence`-th [number] of the answer one the check found wrong (the writer cited a
    source that does not say that sentence)?"""
    places = [s for s, _, numbers in marker_spans(turn.answer) if number in numbers]
    if not 0 <= occurrence < len(places):
        return False
    at = places[occurrence]
    return any(v.start <= at < v.end and number in v.wrong_markers
               for v in getattr(turn, "sentence_verdicts", []) or [])


@dataclass
class AnswerMap:
    """Where an answer's characters ended up in the document. Markdown's markup characters are
    in no run: an offset among them maps to the next visible character (or, for an end, just
    after the previous one)."""

    doc_start: int = 0
    text_len: int = 0
    runs: list[tuple[int, int, int]] = field(default_factory=list)  # plain (text_start, text_end, doc_start)
    markers: list[tuple[int, int, int, int]] = field(default_factory=list)  # (t0, t1, d0, d1)
    chips: dict[int, list[int]] = field(default_factory=dict)  # number -> doc positions

    def _segments(self) -> list[tuple[int, int, int, int, bool]]:
        """Runs (mapped character by character) and markers (mapped whole), in text order."""
        return sorted([(t0, t1, d0, d0 + t1 - t0, True) for t0, t1, d0 in self.runs]
                      + [(t0, t1, d0, d1, False) for t0, t1, d0, d1 in self.markers])

    def to_text(self, position: int) -> int | None:
        """The answer offset drawn at document `position` (None: not a character of the answer)."""
        for t0, t1, d0, d1, linear in self._segments():
            if d0 <= position < d1:
                return t0 + position - d0 if linear else t0
        return None

    def to_doc(self, offset: int, end: bool = False) -> int:
        segments = self._segments()
        if end:
            pos = self.doc_start
            for t0, t1, d0, d1, linear in segments:
                if t0 >= offset:
                    break
                pos = d0 + min(offset, t1) - t0 if linear else d1
            return pos
        for t0, t1, d0, d1, linear in segments:
            if offset < t1:
                return d0 + max(0, offset - t0) if linear else d0
        return segments[-1][3] if segments else self.doc_start


def chip_numbers_of(turn: Any, live: bool) -> set[int]:
    """The marker numbers drawn as chips: those the citation builder accepted, or, while the
    answer streams, those naming one of its sources (known before its text)."""
    if live:
        return {int(s.get("ordinal") or 0) for s in turn.sources} - {0}
    return {int(c["number"]) for c in turn.citations}


class Writer:
    """Lays one answer's Markdown blocks out at a cursor, recording in its `AnswerMap` where
    each visible character went. The first block fills the empty block the cursor is in."""

    def __init__(self, view: Any, cursor: QTextCursor, turn_index: int, turn: Any,
                 amap: AnswerMap, text: str, markers: list[tuple[int, int, list[int]]]) -> None:
        self.view, self.cursor, self.i, self.turn, self.amap = view, cursor, turn_index, turn, amap
        self.text = text
        self.markers = markers
        self.live = turn_index == view._live
        self.fresh = True  # the cursor's block is still empty
        self.lists: dict[int, tuple[str, QTextList]] = {}  # nesting level -> (kind, list)
        pal = view.palette()
        self.tint = tint(pal.color(QPalette.ColorRole.Text), 18)
        self.mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()

    # ---------------------------------------------------------------- blocks

    def _new_block(self, fmt: QTextBlockFormat, char: QTextCharFormat | None = None) -> None:
        if self.fresh:
            self.cursor.setBlockFormat(fmt)
            self.cursor.setBlockCharFormat(char or QTextCharFormat())
            self.fresh = False
        else:
            self.cursor.insertBlock(fmt, char or QTextCharFormat())

    def block(self, block: markdown.Block) -> None:
        if block.kind not in ("bullet", "ordered"):
            self.lists.clear()
        fmt = QTextBlockFormat()
        fmt.setTopMargin(10 if block.gap else 0)
        char = QTextCharFormat()
        if block.kind == "heading":
            fmt.setTopMargin(10 if block.gap or block.level <= 2 else 4)
            char.setFontWeight(QFont.Weight.Bold)
            char.setFontPointSize(self.view.font().pointSizeF() * {1: 1.35, 2: 1.2, 3: 1.1}.get(block.level, 1.0))
        elif block.kind == "quote":
            fmt.setLeftMargin(16)
            char.setFontItalic(True)
            char.setForeground(self.view._ink(QPalette.ColorRole.PlaceholderText))
        elif block.kind == "rule":
            fmt.setProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth,
                            QTextLength(QTextLength.Type.PercentageLength, 100))
        if block.kind == "code":
            self._code(block, fmt)
        elif block.kind == "table":
            self._table(block)
        else:
            self._new_block(fmt, char)
            if block.kind in ("bullet", "ordered"):
                self._list_item(block)
            self.runs(self.cursor, block.runs, char)

    def _list_item(self, block: markdown.Block) -> None:
        for level in [k for k in self.lists if k > block.level]:
            del self.lists[level]
        kind_list = self.lists.get(block.level)
        if kind_list is not None and kind_list[0] == block.kind:
            kind_list[1].add(self.cursor.block())
            return
        lf = QTextListFormat()
        lf.setIndent(block.level + 1)
        if block.kind == "ordered":
            lf.setStyle(QTextListFormat.Style.ListDecimal)
            lf.setStart(block.number)
        else:
            lf.setStyle((QTextListFormat.Style.ListDisc, QTextListFormat.Style.ListCircle,
                         QTextListFormat.Style.ListSquare)[block.level % 3])
        self.lists[block.level] = (block.kind, self.cursor.createList(lf))

    def _code(self, block: markdown.Block, fmt: QTextBlockFormat) -> None:
        """Each line a block on a tinted ground in a fixed-pitch font, then a Copy link."""
        fmt.setBackground(self.tint)
        fmt.setLeftMargin(6)
        fmt.setRightMargin(6)
        fmt.setNonBreakableLines(True)
        char = QTextCharFormat()
        char.setFontFamilies([self.mono])
        lines = block.runs or [markdown.Run(0, 0, markdown.CODE)]
        for n, run in enumerate(lines):
            line_fmt = QTextBlockFormat(fmt)
            if n:
                line_fmt.setTopMargin(0)
            self._new_block(line_fmt, char)
            self.runs(self.cursor, [run] if run.end > run.start else [], char)
        k = sum(1 for key in self.view._code if key[0] == self.i)
        self.view._code[(self.i, k)] = block.code_text(self.text)
        link = QTextBlockFormat()
        link.setAlignment(Qt.AlignmentFlag.AlignRight)
        link.setRightMargin(6)
        self._new_block(link)
        lf = QTextCharFormat()
        lf.setAnchor(True)
        lf.setAnchorHref(f"code:{self.i}:{k}")
        lf.setForeground(self.view._ink(QPalette.ColorRole.Link))
        lf.setFontPointSize(max(7.0, self.view.font().pointSizeF() * 0.85))
        self.cursor.insertText("Copy code", lf)

    def _table(self, block: markdown.Block) -> None:
        if not self.fresh:
            self.cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        tf = QTextTableFormat()
        tf.setBorder(1)
        tf.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
        tf.setBorderBrush(self.view._ink(QPalette.ColorRole.Mid))
        tf.setCellSpacing(0)
        tf.setCellPadding(4)
        tf.setTopMargin(4)
        tf.setBottomMargin(4)
        tf.setHeaderRowCount(1)
        rows, cols = len(block.cells), len(block.cells[0])
        table = self.cursor.insertTable(rows, cols, tf)
        for r, row in enumerate(block.cells):
            for c, runs in enumerate(row):
                char = QTextCharFormat()
                if r == 0:
                    char.setFontWeight(QFont.Weight.Bold)
                    cell_fmt = table.cellAt(r, c).format()
                    cell_fmt.setBackground(self.tint)
                    table.cellAt(r, c).setFormat(cell_fmt)
                self.runs(table.cellAt(r, c).firstCursorPosition(), runs, char)
        self.cursor.movePosition(QTextCursor.MoveOperation.End)
        self.fresh = True  # Qt keeps an empty block after a table: the next block goes there

    # ---------------------------------------------------------------- text

    def runs(self, cursor: QTextCursor, runs: list[markdown.Run], base: QTextCharFormat) -> None:
        """Insert visible runs, accepted markers inside them (not in code) as chips."""
        for run in runs:
            fmt = QTextCharFormat(base)
            if run.style & markdown.BOLD:
                fmt.setFontWeight(QFont.Weight.Bold)
            if run.style & markdown.ITALIC:
                fmt.setFontItalic(True)
            if run.style & markdown.CODE:
                fmt.setFontFamilies([self.mono])
                fmt.setBackground(self.tint)
            pos = run.start
            inside = [] if run.style & markdown.CODE else [
                m for m in self.markers if run.start <= m[0] and m[1] <= run.end]
            for start, end, numbers in inside:
                self._plain(cursor, pos, start, fmt)
                self._chips(cursor, start, end, numbers, fmt)
                pos = end
            self._plain(cursor, pos, run.end, fmt)

    def _plain(self, cursor: QTextCursor, start: int, end: int, fmt: QTextCharFormat) -> None:
        if end > start:
            self.amap.runs.append((start, end, cursor.position()))
            cursor.insertText(self.text[start:end], fmt)

    def _chips(self, cursor: QTextCursor, start: int, end: int, numbers: list[int],
               fmt: QTextCharFormat) -> None:
        accepted = chip_numbers_of(self.turn, self.live)
        d0 = cursor.position()
        for n in numbers:
            if n in accepted:
                self.amap.chips.setdefault(n, []).append(cursor.position())
                chip = self.view._chip_format(self.i, n, self.turn)
                occurrence = len(self.amap.chips[n]) - 1
                chip.setProperty(CHIP_WRONG, not self.live and wrong_marker(self.turn, n, occurrence))
                chip.setAnchorHref(f"cite:{self.i}:{n}:{occurrence}")
                cursor.insertText(OBJECT_CHAR, chip)
            else:
                cursor.insertText(f"[{n}]", fmt)
        self.amap.markers.append((start, end, d0, cursor.position()))
