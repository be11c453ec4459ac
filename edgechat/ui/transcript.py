"""The conversation as one read-only rich-text document, with citation chips.

Each answer is laid out from the Markdown it is written in (edgechat.ui.markdown: headings,
lists, code blocks with a Copy link, tables, emphasis), keeping a map from the answer's
character offsets to document positions (`AnswerMap`), since sentence spans and markers are
offsets into the answer's text. The [n] markers the citation builder accepted are drawn as
chips, inline objects painted as rounded badges that are also links ``cite:<turn>:<n>:<k>``. A
marker naming no source stays plain text. While an answer streams it is laid out again as each
piece arrives; its sources arrive before its text (AnswerSources), so a marker naming one of them
is a chip already, and the citation builder's verdict (wrong markers struck) comes when it is done.

Clicking chip n of an answer highlights that answer's sentences citing n (extra selections) and
emits `sig_chip_clicked(turn, n)`; hovering a chip shows the source's title, page and snippet.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QMimeData, QPoint, QPointF, QRectF, QSizeF, Qt, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QPainter,
    QPalette,
    QPen,
    QPyTextObject,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrameFormat,
)
from PySide6.QtWidgets import QTextBrowser, QTextEdit, QToolTip, QWidget

from edgechat.core.conversations import answer_markdown
from edgechat.core.engine import YOUR_DOCUMENTS_SAY, cited_sentence_spans, marker_spans
from edgechat.core.records import Support
from edgechat.ui import markdown
from edgechat.ui.answer_layout import (
    CHIP_ADDED,
    CHIP_NUMBER,
    CHIP_TURN,
    CHIP_TYPE,
    CHIP_WRONG,
    AnswerMap,
    Writer,
    chip_numbers_of,
    tint,
    wrong_marker,
)
from edgechat.ui.contrast import readable
from edgechat.ui.models import document_label

_clipboard_guard = False
_OUR_FORMAT = "application/x-edgechat-answer"


def _release_clipboard_at_exit() -> None:
    """A QMimeData made in Python and handed to the clipboard is freed twice when the
    interpreter exits (once by Python, once by the clipboard): the process segfaults. Clearing
    the clipboard before Python tears down lets Qt free it once, and Python's wrapper learns of
    it through QObject's destruction."""
    global _clipboard_guard
    if _clipboard_guard:
        return
    _clipboard_guard = True
    import atexit

    def release() -> None:
        from PySide6.QtGui import QClipboard, QGuiApplication

        if QGuiApplication.instance() is None:
            return
        cb = QGuiApplication.clipboard()
        for mode in (QClipboard.Mode.Clipboard, QClipboard.Mode.Selection):
            data = cb.mimeData(mode)
            if data is not None and data.hasFormat(_OUR_FORMAT):
                cb.clear(mode)

    atexit.register(release)


def parse_cite(href: str) -> tuple[int, int] | None:
    """``cite:<turn>:<n>[:<occurrence>]`` -> (turn, n)."""
    found = parse_chip(href)
    return None if found is None else (found[0], found[1])


def parse_chip(href: str) -> tuple[int, int, int] | None:
    """``cite:<turn>:<n>[:<occurrence>]`` -> (turn, n, occurrence of [n] in the answer, from 0)."""
    if not href.startswith("cite:"):
        return None
    try:
        parts = [int(p) for p in href[5:].split(":")]
    except ValueError:
        return None
    if len(parts) == 2:
        return parts[0], parts[1], 0
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


def no_source_note(turn: Any) -> str:
    """Why an answer has no sources, said plainly; "" when it has cited ones."""
    if turn.stop_reason == "error":
        return ""
    if turn.search_skipped:
        return "Not from your documents: no search was needed for this message, so nothing is cited."
    if not turn.sources:
        return "No sources: nothing in your library matched this question."
    if getattr(turn, "abstained", False):
        return ""  # the answer itself says the documents don't say
    if getattr(turn, "draft", "") and turn.answer.startswith(YOUR_DOCUMENTS_SAY):
        return ("The model answered only yes or no, which cannot be checked against your documents, "
                "so the passages closest to the question are shown instead.")
    if getattr(turn, "draft", ""):
        return ("The model's answer is shown up to its first sentence that your documents do not "
                "support; the rest was left out.")
    if not turn.citations:
        return "Not grounded: this answer cites none of the sources found, so check it against them."
    unsupported = sum(v.get("support") == "unsupported" for v in getattr(turn, "verdicts", []) or [])
    if unsupported == 1:
        return "Not grounded: one sentence of this answer is not found in your documents; check it against the sources."
    if unsupported:
        return (f"Not grounded: {unsupported} sentences of this answer are not found in your documents; "
                "check them against the sources.")
    return ""


class ChipHandler(QPyTextObject):
    """Paints a chip: the number on a rounded badge in the palette's highlight colour
    (a light tint normally, solid when it is the chip being followed)."""

    def __init__(self, view: "TranscriptView") -> None:
        super().__init__(view)
        self.view = view

    def _metrics(self, fmt: QTextFormat) -> QFontMetricsF:
        font = QFont(fmt.toCharFormat().font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        font.setBold(True)
        return QFontMetricsF(font)

    def intrinsicSize(self, doc: QTextDocument, pos: int, fmt: QTextFormat) -> QSizeF:
        fm = self._metrics(fmt)
        text = str(fmt.property(CHIP_NUMBER))
        return QSizeF(fm.horizontalAdvance(text) + fm.height() * 0.8 + 3, fm.height() + 3)

    def drawObject(self, painter: QPainter, rect: QRectF, doc: QTextDocument, pos: int,
                   fmt: QTextFormat) -> None:
        pal = self.view.palette()
        number = int(fmt.property(CHIP_NUMBER))
        active = (int(fmt.property(CHIP_TURN)), number) == self.view.active_chip
        added = bool(fmt.property(CHIP_ADDED))
        wrong = bool(fmt.property(CHIP_WRONG))
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        body = rect.adjusted(1.5, 1, -1.5, -1)
        hl = pal.color(QPalette.ColorRole.Highlight)
        if active:
            painter.setBrush(hl)
            painter.setPen(Qt.PenStyle.NoPen)
        elif wrong:  # the writer's citation, which that source does not bear out: greyed, struck below
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(self.view._ink(QPalette.ColorRole.PlaceholderText))
        elif added:  # EdgeChat put this marker, not the writer: an outline only, dashed
            painter.setBrush(Qt.BrushStyle.NoBrush)
            pen = QPen(tint(hl, 200))
            pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
        else:
            painter.setBrush(tint(hl, 56))
            painter.setPen(tint(hl, 150))
        radius = body.height() / 2
        painter.drawRoundedRect(body, radius, radius)
        font = QFont(fmt.toCharFormat().font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        font.setBold(True)
        painter.setFont(font)
        role = (QPalette.ColorRole.HighlightedText if active else
                QPalette.ColorRole.PlaceholderText if wrong else QPalette.ColorRole.Text)
        painter.setPen(pal.color(role))
        painter.drawText(body, Qt.AlignmentFlag.AlignCenter, str(number))
        if wrong and not active:  # struck through, like a correction
            painter.setPen(QPen(QColor(200, 60, 50), 1.5))
            mid = body.center().y()
            painter.drawLine(QPointF(body.left() + 2, mid), QPointF(body.right() - 2, mid))
        painter.restore()


class TranscriptView(QTextBrowser):
    sig_chip_clicked = Signal(int, int)  # turn index, source number
    sig_found_clicked = Signal(int)  # turn index: show "How this was found"
    sig_copied = Signal(int)  # turn index: its answer was copied
    sig_code_copied = Signal(int)  # turn index: a code block of its answer was copied
    sig_show_where = Signal(int, int)  # turn index, sentence (index into its sentence_verdicts)
    sig_regenerate = Signal(int)  # turn index: ask its question again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.followed_occurrence = 0  # while a chip click is being followed: which [n] it was
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setFrameShape(QTextBrowser.Shape.NoFrame)
        self.document().setDocumentMargin(14)
        self._handler = ChipHandler(self)
        self.document().documentLayout().registerHandler(CHIP_TYPE, self._handler)
        self._turns: list[Any] = []
        self._live: int | None = None
        self._maps: dict[int, AnswerMap] = {}
        self._stream_cursor: QTextCursor | None = None
        self._live_start = 0
        self._live_text = ""
        self._code: dict[tuple[int, int], str] = {}  # (turn, k) -> the text of code block k
        self.active_chip: tuple[int, int] | None = None
        self.active_sentence: tuple[int, int] | None = None  # (turn, verdict) being shown
        self.open_drafts: set[int] = set()  # turns whose unverified draft is unfolded
        self.anchorClicked.connect(self._on_anchor)

    # ---------------------------------------------------------------- content

    def set_turns(self, turns: list[Any], live: int | None = None) -> None:
        """Show these turns (edgechat.core.conversations.Turn); turn `live` is streaming."""
        self._turns = turns
        self._live = live
        self.open_drafts = {i for i in self.open_drafts if i < len(turns)}
        if self.active_chip and self.active_chip[0] >= len(turns):
            self.active_chip = None
        if self.active_sentence and self.active_sentence[0] >= len(turns):
            self.active_sentence = None
        self.render()

    def append_to_live(self, text: str) -> None:
        """Stream text onto the end of the live answer."""
        if self._stream_cursor is None or self._live is None:
            return
        sb = self.verticalScrollBar()
        follow = sb.value() >= sb.maximum() - 8
        self._live_text += text
        # The live answer is the end of the document: lay it out again from its start, so that
        # Markdown that a later token completes (a closing fence, a table's rule) takes shape.
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._live_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        lst = cursor.block().textList()
        if lst is not None:
            lst.remove(cursor.block())
        cursor.setBlockFormat(QTextBlockFormat())
        turn = self._turns[self._live]
        self._code = {key: code for key, code in self._code.items() if key[0] != self._live}
        amap = AnswerMap(doc_start=cursor.position(), text_len=len(self._live_text))
        self._maps[self._live] = amap
        self._insert_answer_text(cursor, self._live, turn, amap, text=self._live_text)
        self._stream_cursor = cursor
        if follow:
            sb.setValue(sb.maximum())

    def render(self) -> None:
        sb = self.verticalScrollBar()
        at_bottom = sb.value() >= sb.maximum() - 8
        old = sb.value()
        doc = self.document()
        doc.clear()
        self._maps.clear()
        self._code.clear()
        self._stream_cursor = None
        cursor = QTextCursor(doc)
        for i, turn in enumerate(self._turns):
            self._insert_turn(cursor, i, turn)
        self._apply_highlight()
        if at_bottom or self._live is not None:
            sb.setValue(sb.maximum())
        else:
            sb.setValue(old)

    # ---------------------------------------------------------------- layout of a turn

    def _answer_format(self) -> QTextCharFormat:
        return QTextCharFormat()

    def _label_format(self) -> QTextCharFormat:
        f = QTextCharFormat()
        f.setFontWeight(QFont.Weight.Bold)
        f.setForeground(self._ink(QPalette.ColorRole.PlaceholderText))
        f.setFontPointSize(max(7.0, self.font().pointSizeF() * 0.85))
        return f

    def _insert_turn(self, cursor: QTextCursor, i: int, turn: Any) -> None:
        pal = self.palette()
        # The question, in a tinted frame.
        frame = QTextFrameFormat()
        frame.setBackground(tint(pal.color(QPalette.ColorRole.Highlight), 28))
        frame.setPadding(8)
        frame.setTopMargin(14 if i else 2)
        frame.setBottomMargin(6)
        frame.setBorder(0)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertFrame(frame)
        cursor.insertText("You", self._label_format())
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        cursor.insertText(turn.question, QTextCharFormat())
        cursor.movePosition(QTextCursor.MoveOperation.End)

        # The answer.
        block = QTextBlockFormat()
        block.setTopMargin(4)
        cursor.insertBlock(block, QTextCharFormat())
        cursor.insertText("EdgeChat", self._label_format())
        cursor.insertBlock(QTextBlockFormat(), self._answer_format())
        amap = AnswerMap(doc_start=cursor.position(), text_len=len(turn.answer))
        self._maps[i] = amap
        if i == self._live:
            self._live_start = cursor.position()
            self._live_text = turn.answer
            self._insert_answer_text(cursor, i, turn, amap, text=self._live_text)
            self._stream_cursor = QTextCursor(cursor)
            return
        self._insert_answer_text(cursor, i, turn, amap)
        note = turn.note or no_source_note(turn)
        if note:
            nb = QTextBlockFormat()
            nb.setTopMargin(4)
            cursor.insertBlock(nb, QTextCharFormat())
            nf = QTextCharFormat()
            nf.setFontItalic(True)
            nf.setForeground(self._ink(QPalette.ColorRole.PlaceholderText))
            cursor.insertText(("⚠ " if not turn.grounded or turn.stop_reason == "error" else "") + note, nf)
        if getattr(turn, "draft", ""):
            self._insert_draft(cursor, i, turn)
        if turn.answer.strip():
            self._insert_link(cursor, f"copy:{i}", "Copy answer")
        if i == len(self._turns) - 1 and self._live is None and turn.question.strip():
            self._insert_link(cursor, f"regen:{i}", "Regenerate")
        if getattr(turn, "found", None):
            self._insert_link(cursor, f"found:{i}", "How this was found")

    def _ink(self, role: QPalette.ColorRole) -> QColor:
        """The palette's colour for `role`, made readable on the transcript's background."""
        pal = self.palette()
        return readable(pal.color(role), pal.color(QPalette.ColorRole.Base))

    def _insert_link(self, cursor: QTextCursor, href: str, text: str) -> None:
        """A small link on a line of its own under an answer."""
        lb = QTextBlockFormat()
        lb.setTopMargin(2)
        cursor.insertBlock(lb, QTextCharFormat())
        lf = QTextCharFormat()
        lf.setAnchor(True)
        lf.setAnchorHref(href)
        lf.setForeground(self._ink(QPalette.ColorRole.Link))
        lf.setFontPointSize(max(7.0, self.font().pointSizeF() * 0.85))
        cursor.insertText(text, lf)

    def _insert_draft(self, cursor: QTextCursor, i: int, turn: Any) -> None:
        """The model's unverified text, folded away behind a link until asked for."""
        is_open = i in self.open_drafts
        self._insert_link(cursor, f"draft:{i}", ("Hide" if is_open else "Show") + " the model's unverified answer")
        if not is_open:
            return
        db = QTextBlockFormat()
        db.setLeftMargin(14)
        db.setTopMargin(2)
        df = QTextCharFormat()
        df.setForeground(self._ink(QPalette.ColorRole.PlaceholderText))
        df.setFontItalic(True)
        for n, paragraph in enumerate(turn.draft.split("\n")):
            cursor.insertBlock(db, df)
            cursor.insertText(("Unverified: " if n == 0 else "") + paragraph, df)

    def toggle_draft(self, turn_index: int) -> None:
        self.open_drafts ^= {turn_index}
        self.render()

    def _insert_answer_text(self, cursor: QTextCursor, i: int, turn: Any, amap: AnswerMap,
                            text: str | None = None) -> None:
        """The answer laid out from its Markdown (edgechat.ui.markdown), in the empty block at
        the cursor: accepted markers as chips (none while it streams: `text` is then the text so
        far), sentences no source supports marked."""
        live = text is not None
        text = turn.answer if text is None else text
        accepted = chip_numbers_of(turn, live)
        markers = [m for m in marker_spans(text) if any(n in accepted for n in m[2])]
        writer = Writer(self, cursor, i, turn, amap, text, markers)
        for block in markdown.parse(text):
            writer.block(block)
        if not live:
            self._mark_unsupported(cursor, i, turn, amap)

    def _mark_unsupported(self, cursor: QTextCursor, i: int, turn: Any, amap: AnswerMap) -> None:
        """Sentences no source supports: a wavy underline, and "not found in your documents"
        (with the reason) on hover. Chips inside them keep their own look."""
        verdicts = turn.sentence_verdicts if hasattr(turn, "sentence_verdicts") else []
        spans = [(v.start, v.end) for v in verdicts if v.support == Support.UNSUPPORTED]
        if not spans or i == self._live:
            return
        warn = QTextCharFormat()
        warn.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        warn.setUnderlineColor(QColor(214, 120, 0))
        for k, (a, b) in enumerate(spans):
            warn.setAnchor(True)
            warn.setAnchorHref(f"unsupported:{i}:{k}")
            for r0, r1, d0 in amap.runs:
                lo, hi = max(a, r0), min(b, r1)
                if lo >= hi:
                    continue
                c = QTextCursor(self.document())
                c.setPosition(d0 + lo - r0)
                c.setPosition(d0 + hi - r0, QTextCursor.MoveMode.KeepAnchor)
                c.mergeCharFormat(warn)

    def unsupported_texts(self, turn_index: int) -> list[str]:
        """The answer's text marked unsupported, sentence by sentence (for tests and access)."""
        out: dict[str, list[str]] = {}
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                href = frag.charFormat().anchorHref()
                if href.startswith(f"unsupported:{turn_index}:"):
                    out.setdefault(href, []).append(frag.text())
                it += 1
            block = block.next()
        return ["".join(parts).strip() for parts in out.values()]

    def unsupported_tooltip(self, href: str) -> str:
        try:
            _, turn_index, k = href.split(":")
            turn = self._turns[int(turn_index)]
            verdicts = [v for v in turn.sentence_verdicts if v.support == Support.UNSUPPORTED]
            reason = verdicts[int(k)].reason
        except (ValueError, IndexError, AttributeError):
            reason = ""
        return ("<p style='white-space:pre-wrap'><b>Not found in your documents.</b>"
                + (f"<br/>{html.escape(reason)}" if reason else "") + "</p>")

    def _chip_format(self, turn_index: int, number: int, turn: Any) -> QTextCharFormat:
        f = QTextCharFormat()
        f.setObjectType(CHIP_TYPE)
        f.setProperty(CHIP_NUMBER, number)
        f.setProperty(CHIP_TURN, turn_index)
        cit = next((c for c in turn.citations if int(c.get("number") or 0) == number), {})
        f.setProperty(CHIP_ADDED, bool(cit.get("added")))
        f.setAnchor(True)
        f.setAnchorHref(f"cite:{turn_index}:{number}")
        f.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignMiddle)
        return f

    # ---------------------------------------------------------------- chips

    def chip_numbers(self, turn_index: int) -> list[int]:
        """The numbers drawn as chips in an answer, in document order (for tests and access)."""
        amap = self._maps.get(turn_index)
        if amap is None:
            return []
        return [n for _, n in sorted((p, n) for n, ps in amap.chips.items() for p in ps)]

    def chip_rect(self, turn_index: int, number: int, occurrence: int = 0):
        """The chip's rectangle in viewport coordinates (None if it is not drawn)."""
        amap = self._maps.get(turn_index)
        if amap is None or number not in amap.chips or occurrence >= len(amap.chips[number]):
            return None
        c = QTextCursor(self.document())
        c.setPosition(amap.chips[number][occurrence])
        left = self.cursorRect(c)
        c.setPosition(amap.chips[number][occurrence] + 1)
        right = self.cursorRect(c)
        if right.top() != left.top():
            right = left.translated(12, 0)
        return left.united(right)

    def code_blocks(self, turn_index: int) -> list[str]:
        """The code blocks of an answer, in order (what their Copy links copy)."""
        return [code for (i, _), code in sorted(self._code.items()) if i == turn_index]

    def copy_code(self, href: str) -> str:
        """Put the code block named by a ``code:<turn>:<k>`` link on the clipboard."""
        try:
            _, turn_index, k = href.split(":")
            code = self._code[(int(turn_index), int(k))]
        except (ValueError, KeyError):
            return ""
        QGuiApplication.clipboard().setText(code)
        self.sig_code_copied.emit(int(turn_index))
        return code

    def copy_answer(self, turn_index: int) -> str:
        """Put answer `turn_index` on the clipboard as Markdown, with its [n] markers and the
        sources they name (edgechat.core.conversations.answer_markdown); returns the text."""
        if not 0 <= turn_index < len(self._turns):
            return ""
        text = answer_markdown(self._turns[turn_index])
        QGuiApplication.clipboard().setText(text)
        self.sig_copied.emit(turn_index)
        return text

    def _on_anchor(self, url: QUrl) -> None:
        href = url.toString()
        if href.startswith("unsupported:"):
            return  # a marked sentence: its tooltip says why; nothing to open
        if href.startswith("draft:") and href[6:].isdigit():
            self.toggle_draft(int(href[6:]))
            return
        if href.startswith("copy:") and href[5:].isdigit():
            self.copy_answer(int(href[5:]))
            return
        if href.startswith("code:"):
            self.copy_code(href)
            return
        if href.startswith("regen:") and href[6:].isdigit():
            self.sig_regenerate.emit(int(href[6:]))
            return
        if href.startswith("found:") and href[6:].isdigit():
            self.sig_found_clicked.emit(int(href[6:]))
            return
        chip = parse_chip(href)
        if chip is None:
            return
        self.followed_occurrence = chip[2]  # which [n] of the answer was clicked
        self.highlight(chip[0], chip[1])
        self.sig_chip_clicked.emit(chip[0], chip[1])
        self.followed_occurrence = 0

    def highlight(self, turn_index: int, number: int | None) -> None:
        """Highlight the sentences of answer `turn_index` that cite `number` (None clears)."""
        self.active_chip = None if number is None else (turn_index, number)
        self.active_sentence = None
        self._apply_highlight()
        self.viewport().update()

    # ---------------------------------------------------------------- "show me where"

    def sentence_at(self, pos: QPoint) -> tuple[int, int] | None:
        """The checked sentence drawn at viewport point `pos`, as (turn, index into its
        sentence_verdicts), or None."""
        position = self.cursorForPosition(pos).position()
        for turn_index, amap in self._maps.items():
            if turn_index == self._live or turn_index >= len(self._turns):
                continue
            offset = amap.to_text(position)
            if offset is None:
                continue
            for k, v in enumerate(self._turns[turn_index].sentence_verdicts):
                if v.start <= offset < v.end:
                    return turn_index, k
        return None

    def sentences_with_sources(self, turn_index: int) -> list[int]:
        """The sentences of an answer whose sources the check found, in order."""
        if not 0 <= turn_index < len(self._turns) or turn_index == self._live:
            return []
        return [k for k, v in enumerate(self._turns[turn_index].sentence_verdicts) if v.sources or v.evidence]

    def show_where(self, turn_index: int, k: int) -> None:
        """Highlight sentence `k` of an answer and ask for its evidence to be shown."""
        verdicts = self._turns[turn_index].sentence_verdicts if 0 <= turn_index < len(self._turns) else []
        if not 0 <= k < len(verdicts):
            return
        self.active_chip = None
        self.active_sentence = (turn_index, k)
        self._apply_highlight()
        self.viewport().update()
        self.sig_show_where.emit(turn_index, k)

    def show_next_where(self, turn_index: int) -> bool:
        """Step to the answer's next sentence with a source (from the first, after the last);
        False when it has none."""
        ks = self.sentences_with_sources(turn_index)
        if not ks:
            return False
        current = self.active_sentence[1] if self.active_sentence and self.active_sentence[0] == turn_index else -1
        self.show_where(turn_index, next((k for k in ks if k > current), ks[0]))
        return True

    def contextMenuEvent(self, event) -> None:
        menu = self.createStandardContextMenu(event.pos())
        found = self.sentence_at(event.pos())
        if found is not None:
            turn_index, k = found
            menu.insertSeparator(menu.actions()[0] if menu.actions() else None)
            verdict = self._turns[turn_index].sentence_verdicts[k]
            if verdict.sources or verdict.evidence:
                act = QAction("Show me where this comes from", menu)
                act.triggered.connect(lambda: self.show_where(turn_index, k))
            else:
                act = QAction("Not found in your documents", menu)
                act.setEnabled(False)
            menu.insertAction(menu.actions()[0], act)
        menu.exec(event.globalPos())
        menu.deleteLater()

    def highlighted_texts(self) -> list[str]:
        return [s.cursor.selectedText().replace("\u2029", "\n") for s in self.extraSelections()]

    def _apply_highlight(self) -> None:
        selections: list[QTextEdit.ExtraSelection] = []
        spans: list[tuple[int, int]] = []
        turn_index = -1
        if self.active_sentence is not None:
            turn_index, k = self.active_sentence
            verdicts = self._turns[turn_index].sentence_verdicts
            spans = [(verdicts[k].start, verdicts[k].end)] if k < len(verdicts) else []
        elif self.active_chip is not None and self.active_chip[0] < len(self._turns):
            turn_index, number = self.active_chip
            spans = cited_sentence_spans(self._turns[turn_index].answer, number)
        amap = self._maps.get(turn_index)
        if spans and amap is not None and turn_index != self._live:
            color = tint(self.palette().color(QPalette.ColorRole.Highlight), 70)
            for a, b in spans:
                sel = QTextEdit.ExtraSelection()
                cur = QTextCursor(self.document())
                cur.setPosition(amap.to_doc(a))
                cur.setPosition(amap.to_doc(b, end=True), QTextCursor.MoveMode.KeepAnchor)
                sel.cursor = cur
                fmt = QTextCharFormat()
                fmt.setBackground(color)
                sel.format = fmt
                selections.append(sel)
            rect = self.cursorRect(QTextCursor(selections[0].cursor))
            if not self.viewport().rect().contains(rect.center()):
                sb = self.verticalScrollBar()
                sb.setValue(sb.value() + rect.top() - self.viewport().height() // 3)
        self.setExtraSelections(selections)

    def changeEvent(self, event) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._turns:
            self.render()  # labels and tints follow a light/dark switch

    # ---------------------------------------------------------------- tooltips and copying

    def _chip_at(self, pos: QPoint) -> tuple[int, int, int] | None:
        href = self.anchorAt(pos)
        return parse_chip(href) if href else None

    def viewportEvent(self, event) -> bool:
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.ToolTip:
            cite = self._chip_at(event.pos())
            if cite is not None:
                QToolTip.showText(event.globalPos(), self.chip_tooltip(*cite), self.viewport())
                return True
            href = self.anchorAt(event.pos())
            if href.startswith("unsupported:"):
                QToolTip.showText(event.globalPos(), self.unsupported_tooltip(href), self.viewport())
                return True
            QToolTip.hideText()
        return super().viewportEvent(event)

    def chip_tooltip(self, turn_index: int, number: int, occurrence: int = 0) -> str:
        if turn_index >= len(self._turns):
            return ""
        turn = self._turns[turn_index]
        src = next((s for s in turn.sources if int(s.get("ordinal") or 0) == number), None)
        cit = next((c for c in turn.citations if int(c["number"]) == number), None)
        info = src or cit or {}
        title = html.escape(document_label(info.get("title"), info.get("path")) or "source")
        page = info.get("page") or 1
        snippet = html.escape(str(info.get("snippet") or ""))
        added = "<br/>Added by EdgeChat: the answer's writer did not cite this source." if cit and cit.get("added") else ""
        if wrong_marker(turn, number, occurrence):
            added = "<br/><b>Wrong citation:</b> this source does not say the sentence it is on."
        return (f"<p style='white-space:pre-wrap'><b>[{number}] {title}</b><br/>page {page}"
                f"<br/><i>{snippet}</i>{added}</p>")

    def createMimeDataFromSelection(self) -> QMimeData:
        """Copying an answer gives its [n] markers back instead of object characters."""
        cur = self.textCursor()
        start, end = cur.selectionStart(), cur.selectionEnd()
        out: list[str] = []
        block = self.document().findBlock(start)
        while block.isValid() and block.position() <= end:
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                f0, f1 = frag.position(), frag.position() + frag.length()
                a, b = max(f0, start), min(f1, end)
                if a < b:
                    fmt = frag.charFormat()
                    if fmt.objectType() == CHIP_TYPE:
                        out.append(f"[{int(fmt.property(CHIP_NUMBER))}]" * (b - a))
                    else:
                        out.append(frag.text()[a - f0 : b - f0])
                it += 1
            if block.position() + block.length() <= end:
                out.append("\n")
            block = block.next()
        data = QMimeData()
        data.setText("".join(out).rstrip("\n") if end < self.document().characterCount() else "".join(out))
        data.setData(_OUR_FORMAT, b"1")
        _release_clipboard_at_exit()
        return data
