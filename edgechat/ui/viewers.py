"""The document viewer of the source pane: a PDF rendered by QtPdf with the cited passage's
outline painted over its page, or any other document's text with the passage highlighted.

Placing a PDF passage: the chunk text (extracted by pypdf at indexing time) is aligned to
QtPdf's own page text (QPdfDocument.getAllText) ignoring whitespace and punctuation
(edgechat.ui.align), then QPdfDocument.getSelectionAtIndex gives the outline of that span.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QGuiApplication,
    QKeySequence,
    QPainter,
    QPalette,
    QPen,
    QPolygonF,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.records import SourceStatus
from edgechat.ui.align import align_passage
from edgechat.ui.models import document_label

if TYPE_CHECKING:
    from edgechat.ui.workers import LoadedSource

log = logging.getLogger(__name__)


def _qround(x: float) -> int:
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def highlight_color(palette: QPalette, alpha: int) -> QColor:
    c = QColor(palette.color(QPalette.ColorRole.Highlight))
    c.setAlpha(alpha)
    return c


# ====================================================================== PDF


def make_pdf_view(parent: QWidget | None = None):
    """A QPdfView that paints one passage's outline. Built on first use, so QtPdf loads only
    when a PDF is first shown."""
    from PySide6.QtPdfWidgets import QPdfView

    class _View(QPdfView):
        """QPdfView in continuous (multi-page) mode that paints one passage's outline.

        QPdfView does not publish where it draws each page, so `page_rect` repeats its layout
        (QPdfViewPrivate::calculateDocumentLayout): page size = points x screen dpi / 72 x zoom
        (or fitted to the width), pages stacked with the page spacing inside the document
        margins, centred horizontally, moved by the scroll bars."""

        def __init__(self, parent: QWidget | None) -> None:
            super().__init__(parent)
            self.setPageMode(QPdfView.PageMode.MultiPage)
            self.setZoomMode(QPdfView.ZoomMode.FitToWidth)
            screen = QGuiApplication.primaryScreen()
            self._screen_res = (screen.logicalDotsPerInch() if screen else 96.0) / 72.0
            self.highlight_page = -1
            self.highlight_polygons: list[QPolygonF] = []

        def set_highlight(self, page: int, polygons: list[QPolygonF]) -> None:
            self.highlight_page = page
            self.highlight_polygons = list(polygons)
            self.viewport().update()

        def _page_sizes(self) -> list[QSize]:
            doc = self.document()
            if doc is None or doc.status() != doc.Status.Ready:
                return []
            m = self.documentMargins()
            vw, vh = self.viewport().width(), self.viewport().height()
            mode = self.zoomMode()
            sizes = []
            for page in range(doc.pageCount()):
                pts = doc.pagePointSize(page)
                w, h = _qround(pts.width() * self._screen_res), _qround(pts.height() * self._screen_res)
                if mode == QPdfView.ZoomMode.Custom:
                    z = self.zoomFactor()
                    w, h = _qround(pts.width() * self._screen_res * z), _qround(pts.height() * self._screen_res * z)
                elif mode == QPdfView.ZoomMode.FitToWidth and w > 0:
                    factor = (vw - m.left() - m.right()) / w
                    w, h = _qround(w * factor), _qround(h * factor)
                elif mode == QPdfView.ZoomMode.FitInView:
                    s = QSize(w, h).scaled(QSize(vw - m.left() - m.right(), vh - self.pageSpacing()),
                                           Qt.AspectRatioMode.KeepAspectRatio)
                    w, h = s.width(), s.height()
                sizes.append(QSize(w, h))
            return sizes

        def page_rect(self, page: int) -> QRectF:
            """Where `page` is drawn, in viewport coordinates (empty if unknown)."""
            sizes = self._page_sizes()
            if not 0 <= page < len(sizes):
                return QRectF()
            m = self.documentMargins()
            total_w = max(s.width() for s in sizes) + m.left() + m.right()
            y = m.top()
            for p in range(page):
                y += sizes[p].height() + self.pageSpacing()
            x = (max(total_w, self.viewport().width()) - sizes[page].width()) // 2
            return QRectF(x - self.horizontalScrollBar().value(), y - self.verticalScrollBar().value(),
                          sizes[page].width(), sizes[page].height())

        def highlight_rects(self) -> list[QRectF]:
            """The highlight's rectangles in viewport coordinates."""
            return [poly.boundingRect() for poly in self._mapped()]

        def _mapped(self) -> list[QPolygonF]:
            """The highlight's polygons in viewport coordinates."""
            rect = self.page_rect(self.highlight_page)
            doc = self.document()
            if rect.isEmpty() or doc is None:
                return []
            pts = doc.pagePointSize(self.highlight_page)
            sx, sy = rect.width() / pts.width(), rect.height() / pts.height()
            return [QPolygonF([QPointF(rect.left() + p.x() * sx, rect.top() + p.y() * sy) for p in poly])
                    for poly in self.highlight_polygons]

        def paintEvent(self, event) -> None:
            super().paintEvent(event)
            if self.highlight_page < 0 or not self.highlight_polygons:
                return
            painter = QPainter(self.viewport())
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            fill = QColor(255, 200, 0, 80)  # a marker-pen yellow reads on white pages in both themes
            edge = highlight_color(self.palette(), 230)
            painter.setPen(QPen(edge, 1.6))
            painter.setBrush(fill)
            for poly in self._mapped():
                painter.drawPolygon(poly)
            painter.end()

        def scroll_to_highlight(self) -> None:
            rects = self.highlight_rects()
            if not rects:
                if self.highlight_page >= 0:
                    r = self.page_rect(self.highlight_page)
                    sb = self.verticalScrollBar()
                    sb.setValue(sb.value() + int(r.top()) - 6)
                return
            top = min(r.top() for r in rects)
            sb = self.verticalScrollBar()
            sb.setValue(sb.value() + int(top - self.viewport().height() / 4))

    return _View(parent)


class PdfViewer(QWidget):
    """A PDF with page navigation and zoom, and one highlighted passage."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from PySide6.QtPdf import QPdfDocument

        self.document = QPdfDocument(self)
        self.view = make_pdf_view(self)
        self.view.setDocument(self.document)
        self.passage_span: tuple[int, int] | None = None

        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        self.prev_button = self._tool("◀", "Previous page (Page Up)", self.previous_page)
        self.page_spin = QSpinBox()
        self.page_spin.setMinimum(1)
        self.page_spin.setAccessibleName("Page")
        self.page_spin.editingFinished.connect(lambda: self.go_to_page(self.page_spin.value() - 1))
        self.page_count_label = QLabel("/ 0")
        self.next_button = self._tool("▶", "Next page (Page Down)", self.next_page)
        self.zoom_out_button = self._tool("−", "Zoom out (Ctrl+-)", lambda: self.zoom(1 / 1.25))
        self.zoom_in_button = self._tool("+", "Zoom in (Ctrl++)", lambda: self.zoom(1.25))
        self.fit_button = self._tool("↔", "Fit to width", self.fit_width)
        for w in (self.prev_button, self.page_spin, self.page_count_label, self.next_button):
            bar.addWidget(w)
        bar.addStretch(1)
        for w in (self.zoom_out_button, self.zoom_in_button, self.fit_button):
            bar.addWidget(w)
        self.zoom_out_button.setShortcut(QKeySequence.StandardKey.ZoomOut)
        self.zoom_in_button.setShortcut(QKeySequence.StandardKey.ZoomIn)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        self.view.pageNavigator().currentPageChanged.connect(self._page_changed)

    def _tool(self, text: str, tip: str, slot) -> QToolButton:
        b = QToolButton(self)
        b.setText(text)
        b.setToolTip(tip)
        b.setAccessibleName(tip.split(" (")[0])
        b.setAutoRaise(True)
        b.clicked.connect(slot)
        return b

    def _page_changed(self, page: int) -> None:
        self.page_spin.blockSignals(True)
        self.page_spin.setValue(page + 1)
        self.page_spin.blockSignals(False)

    def show_passage(self, path: str, page_index: int, polygons: list[list[tuple[float, float]]],
                     span: tuple[int, int] | None = None) -> str:
        """Show `path` at `page_index` (0-based) with the passage outlined by `polygons` (page
        points, as DocumentWorker computed them). Returns "" or why it cannot be shown."""
        from PySide6.QtPdf import QPdfDocument

        self.view.set_highlight(-1, [])
        self.passage_span = None
        if self.document.property("edgechat_path") != path or self.document.status() != QPdfDocument.Status.Ready:
            self.document.close()
            err = self.document.load(path)
            self.document.setProperty("edgechat_path", path)
            if err != QPdfDocument.Error.None_:
                return f"QtPdf cannot open this file ({err.name})."
        count = self.document.pageCount()
        self.page_spin.setMaximum(max(1, count))
        self.page_count_label.setText(f"/ {count}")
        index = min(max(page_index, 0), max(count - 1, 0))
        if polygons:
            self.passage_span = tuple(span) if span else None
            self.view.set_highlight(index, [QPolygonF([QPointF(x, y) for x, y in poly]) for poly in polygons])
        self.go_to_page(index)
        QTimer.singleShot(0, self.view.scroll_to_highlight)
        return ""

    def reload(self) -> None:
        """Forget the loaded file (it changed on disk)."""
        self.document.close()
        self.document.setProperty("edgechat_path", "")

    def go_to_page(self, index: int) -> None:
        count = self.document.pageCount()
        if count <= 0:
            return
        index = min(max(index, 0), count - 1)
        self.view.pageNavigator().jump(index, QPointF(), self.view.zoomFactor())
        self._page_changed(index)

    def current_page(self) -> int:
        return self.view.pageNavigator().currentPage()

    def previous_page(self) -> None:
        self.go_to_page(self.current_page() - 1)

    def next_page(self) -> None:
        self.go_to_page(self.current_page() + 1)

    def _effective_zoom(self) -> float:
        from PySide6.QtPdfWidgets import QPdfView

        if self.view.zoomMode() == QPdfView.ZoomMode.Custom or self.document.pageCount() == 0:
            return self.view.zoomFactor()
        r = self.view.page_rect(max(0, self.current_page()))
        pts = self.document.pagePointSize(max(0, self.current_page()))
        return r.width() / (pts.width() * self.view._screen_res) if pts.width() else 1.0

    def zoom(self, factor: float) -> None:
        from PySide6.QtPdfWidgets import QPdfView

        z = min(8.0, max(0.2, self._effective_zoom() * factor))
        self.view.setZoomMode(QPdfView.ZoomMode.Custom)
        self.view.setZoomFactor(z)
        QTimer.singleShot(0, self.view.scroll_to_highlight)

    def fit_width(self) -> None:
        from PySide6.QtPdfWidgets import QPdfView

        self.view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
        QTimer.singleShot(0, self.view.scroll_to_highlight)


# ====================================================================== text


class TextViewer(QPlainTextEdit):
    """A document's text, read-only, with the cited passage highlighted and scrolled to."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.passage_span: tuple[int, int] | None = None

    def show_text(self, pages: list[str], fmt: str, page: int, start: int, end: int, passage: str,
                  *, highlight: bool = True) -> str:
        """Show the document (its sections joined) with the passage highlighted. Returns "" or
        a message saying why it is not."""
        sep = "" if fmt in ("text", "markdown") else "\n\n"
        self.setPlainText(sep.join(pages))
        self.setExtraSelections([])
        self.passage_span = None
        if not highlight or not pages:
            return ""
        index = min(max(page - 1, 0), len(pages) - 1)
        base = sum(len(p) + len(sep) for p in pages[:index])
        page_text = pages[index]
        span: tuple[int, int] | None = None
        if passage and page_text[start:end] == passage:
            span = (start, end)
        elif passage:
            span = align_passage(page_text, passage, hint=start)
        if span is None and passage:
            whole = align_passage(self.toPlainText(), passage, hint=base + start)
            if whole is not None:
                span, base = whole, 0
        if span is None:
            return "The cited passage could not be found in this file; it is shown without a highlight."
        a, b = base + span[0], base + span[1]
        self.passage_span = (a, b)
        cur = QTextCursor(self.document())
        cur.setPosition(a)
        cur.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
        sel = QTextEdit.ExtraSelection()
        sel.cursor = cur
        f = QTextCharFormat()
        f.setBackground(highlight_color(self.palette(), 90))
        sel.format = f
        self.setExtraSelections([sel])
        start_cursor = QTextCursor(self.document())
        start_cursor.setPosition(b)
        self.setTextCursor(start_cursor)
        self.ensureCursorVisible()
        start_cursor.setPosition(a)
        self.setTextCursor(start_cursor)
        QTimer.singleShot(0, self.centerCursor)
        return ""

    def highlighted_text(self) -> str:
        sels = self.extraSelections()
        return sels[0].cursor.selectedText().replace("\u2029", "\n") if sels else ""


# ====================================================================== the pane's viewer


class DocumentViewer(QWidget):
    """Header (title, page, what is wrong if anything, Open) over a PDF or text view."""

    sig_open_external = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = ""
        self.title = QLabel("")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setAccessibleName("Document shown")
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.open_button = QToolButton(self)
        self.open_button.setText("Open")
        self.open_button.setToolTip("Open the file in the system's viewer")
        self.open_button.clicked.connect(self.open_external)
        self.open_button.setEnabled(False)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setObjectName("viewerMessage")
        self.message.hide()
        head = QHBoxLayout()
        head.setContentsMargins(6, 4, 4, 2)
        head.addWidget(self.title, 1)
        head.addWidget(self.open_button)
        self.stack = QStackedWidget(self)
        self.placeholder = QLabel("Click a citation chip or a source to see the passage here.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setEnabled(False)
        self.text_view = TextViewer(self)
        self._pdf: PdfViewer | None = None
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.text_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.message)
        layout.addWidget(self.stack, 1)

    @property
    def pdf_view(self) -> PdfViewer:
        if self._pdf is None:
            self._pdf = PdfViewer(self)
            self.stack.addWidget(self._pdf)
        return self._pdf

    def current_kind(self) -> str:
        w = self.stack.currentWidget()
        return "pdf" if w is self._pdf and w is not None else ("text" if w is self.text_view else "none")

    def clear(self) -> None:
        self.path = ""
        self.title.setText("")
        self.title.setToolTip("")
        self.open_button.setEnabled(False)
        self._say("")
        self.stack.setCurrentWidget(self.placeholder)

    def show_loading(self, source: dict) -> None:
        self.path = str(source.get("path") or "")
        self._set_title(source)
        self._say("")

    def _set_title(self, source: dict) -> None:
        title = document_label(source.get("title"), source.get("path"))
        n = source.get("ordinal")
        page = source.get("page") or 1
        self.title.setText(f"[{n}] {title}, page {page}" if n else f"{title}, page {page}")
        self.title.setToolTip(str(source.get("path") or ""))
        self.open_button.setEnabled(bool(source.get("path")))

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def show_result(self, loaded: LoadedSource) -> None:
        """Show a cited source as the engine checked it and, for a PDF, as DocumentWorker
        placed it."""
        source, check = loaded.source, loaded.check
        self.path = check.path or str(source.get("path") or "")
        self._set_title(source)
        if check.status not in (SourceStatus.OK, SourceStatus.CHANGED):
            self.stack.setCurrentWidget(self.placeholder)
            self._say(check.message or "The file cannot be shown.")
            return
        ok = check.status == SourceStatus.OK
        passage = check.chunk_text or str(source.get("content") or "")
        page = int(source.get("page") or 1)
        start, end = check.start, check.end  # the passage, or the part of it the answer rests on
        if loaded.pdf is not None:
            viewer = self.pdf_view
            self.stack.setCurrentWidget(viewer)
            if not ok:
                viewer.reload()
            pdf = loaded.pdf
            note = viewer.show_passage(self.path, pdf.page_index, pdf.polygons if ok else [],
                                       list(pdf.span) if pdf.span else None)
            note = note or pdf.note
        else:
            self.stack.setCurrentWidget(self.text_view)
            note = self.text_view.show_text(check.pages, check.format or "text", page, start, end, passage,
                                            highlight=ok)
        self._say(check.message if not ok else note)

    def open_external(self) -> None:
        if self.path:
            self.sig_open_external.emit(self.path)
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.path))
