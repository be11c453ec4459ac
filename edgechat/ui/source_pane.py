"""The source pane: the numbered sources of the selected answer over the document viewer."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QModelIndex, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QDesktopServices, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListView,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from edgechat.ui.models import SourceListModel
from edgechat.ui.viewers import DocumentViewer


class SourceDelegate(QStyledItemDelegate):
    """Number, title (with the file name beside it), page and relevance in words on the first
    line; metadata; then the snippet.
    The cited sources come first; "Also found" heads the ones the answer does not cite."""

    MARGIN = 6

    def _html(self, index: QModelIndex, palette: QPalette, selected: bool) -> str:
        m = SourceListModel
        n = index.data(m.NumberRole)
        title = html.escape(str(index.data(m.TitleRole)))
        page = index.data(m.PageRole)
        meta = html.escape(str(index.data(m.MetadataRole) or ""))
        snippet = html.escape(str(index.data(m.SnippetRole) or ""))
        cited = index.data(m.CitedRole)
        dim = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText if selected
                            else QPalette.ColorRole.PlaceholderText).name()
        badge = f"<b>[{n}]</b>" if cited else f"<span style='color:{dim}'>[{n}]</span>"
        relevance = html.escape(str(index.data(m.RelevanceRole) or ""))
        name = html.escape(str(index.data(m.FileNameRole) or ""))
        name = f" <span style='color:{dim}'>{name}</span>" if name else ""
        head = f"{badge}&nbsp;<b>{title}</b>{name} <span style='color:{dim}'>· page {page} · {relevance}</span>"
        parts = [head]
        if index.data(m.FirstAlsoFoundRole):
            label = "Also found (not cited)" if index.row() else "Found (the answer cites none of them)"
            parts.insert(0, f"<span style='color:{dim}; font-size:small'><b>{label}</b></span>")
        if meta:
            parts.append(f"<span style='color:{dim}; font-size:small'>{meta}</span>")
        if snippet:
            parts.append(f"<span>{snippet}</span>")
        return "<br/>".join(parts)

    def _doc(self, option: QStyleOptionViewItem, index: QModelIndex, width: int) -> QTextDocument:
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(self.MARGIN)
        doc.setHtml(self._html(index, option.palette, selected))
        doc.setTextWidth(max(80, width))
        return doc

    def paint(self, painter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget else None
        if style:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        doc = self._doc(option, index, option.rect.width())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        ctx.palette.setColor(QPalette.ColorRole.Text, option.palette.color(role))
        painter.save()
        painter.translate(option.rect.topLeft())
        painter.setClipRect(option.rect.translated(-option.rect.topLeft()))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        view = option.widget
        width = view.viewport().width() if isinstance(view, QAbstractItemView) else option.rect.width()
        doc = self._doc(option, index, width)
        return QSize(width, int(doc.size().height()) + 2)


class SourceList(QListView):
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.scheduleDelayedItemsLayout()  # heights depend on the width


class SourcePane(QWidget):
    """Emits `sig_show_source(source)` when a source should be shown in the viewer."""

    sig_show_source = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = SourceListModel(self)
        self.list = SourceList(self)
        self.list.setModel(self.model)
        self.list.setItemDelegate(SourceDelegate(self.list))
        self.list.setWordWrap(True)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setAccessibleName("Sources")
        self.list.doubleClicked.connect(self._open_external)
        self.list.selectionModel().currentChanged.connect(self._current_changed)
        self.header = QLabel("Sources")
        f = self.header.font()
        f.setBold(True)
        self.header.setFont(f)
        self.header.setContentsMargins(6, 4, 6, 2)
        self.empty = QLabel("The sources of an answer appear here.")
        self.empty.setEnabled(False)
        self.empty.setWordWrap(True)
        self.empty.setContentsMargins(6, 2, 6, 2)
        top = QWidget(self)
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.setSpacing(0)
        tl.addWidget(self.header)
        tl.addWidget(self.empty)
        tl.addWidget(self.list, 1)
        self.viewer = DocumentViewer(self)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("sourceSplitter")
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.viewer)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.turn_index = -1
        self._quiet = False

    def set_sources(self, turn_index: int, sources: list[dict[str, Any]], cited: list[int]) -> None:
        current = [self.model.source(i) for i in range(self.model.rowCount())]
        if turn_index != self.turn_index or not sources or \
                sorted(sources, key=lambda s: int(s.get("ordinal") or 0)) != current:
            self.viewer.clear()  # the passage shown belonged to another answer
        self.turn_index = turn_index
        self._quiet = True
        self.model.set_sources(sources, cited)
        self._quiet = False
        self.header.setText(f"Sources ({len(sources)})" if sources else "Sources")
        self.empty.setVisible(not sources)
        self.empty.setText("This answer has no sources." if turn_index >= 0 else
                           "The sources of an answer appear here.")

    def select_number(self, number: int) -> dict[str, Any] | None:
        """Select source `number` (the viewer follows)."""
        row = self.model.row_of(number)
        if row < 0:
            return None
        index = self.model.index(row)
        self._quiet = True
        self.list.setCurrentIndex(index)
        self._quiet = False
        self.list.scrollTo(index)
        source = self.model.source(row)
        self.sig_show_source.emit(dict(source))
        return source

    def selected_number(self) -> int | None:
        idx = self.list.currentIndex()
        return int(idx.data(SourceListModel.NumberRole)) if idx.isValid() else None

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._quiet or not current.isValid():
            return
        self.sig_show_source.emit(dict(self.model.source(current.row())))

    def _open_external(self, index: QModelIndex) -> None:
        path = index.data(SourceListModel.PathRole)
        if path:
            QDesktopServices.openUrl(QUrl.fromLocalFile(path))
