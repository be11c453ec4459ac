"""The library side: the folders and files of the library with their state and problems, the
Add / Remove buttons, and the indexing progress with Cancel."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.records import IndexPhase, LibraryFile
from edgechat.service.protocol import Progress
from edgechat.ui.models import LibraryModel
from edgechat.ui.progress_text import progress_line


class IndexProgressBox(QWidget):
    """Progress bar, one line of detail, and Cancel. Hidden when nothing runs."""

    sig_cancel = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Indexing")
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.bar = QProgressBar(self)
        self.bar.setTextVisible(True)
        self.bar.setAccessibleName("Indexing progress")
        self.detail = QLabel("")
        self.detail.setWordWrap(True)
        self.detail.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop indexing; files not reached are indexed next time")
        self.cancel_button.clicked.connect(self.sig_cancel)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(3)
        layout.addWidget(self.title)
        layout.addLayout(row)
        layout.addWidget(self.detail)
        self.last: Progress | None = None

    def start(self, title: str) -> None:
        self.title.setText(title)
        self.bar.setRange(0, 0)  # busy until totals are known
        self.detail.setText("Looking for new and changed files…")
        self.cancel_button.setEnabled(True)
        self.show()

    def update_progress(self, p: Progress) -> None:
        self.last = p
        if p.phase == IndexPhase.SCANNING or p.files_total == 0:
            self.bar.setRange(0, 0)
        else:
            # Bytes move the bar more evenly than file counts when sizes differ a lot.
            frac = p.bytes_done / p.bytes_total if p.bytes_total else p.files_done / p.files_total
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(min(1.0, frac) * 1000))
            self.bar.setFormat(f"{p.files_done} / {p.files_total} files")
        self.detail.setText(progress_line(p))

    def finish(self) -> None:
        self.hide()


class _LibraryDelegate(QStyledItemDelegate):
    """A file shown by its title is elided at the right, so the start of its title (what tells it
    apart: LibraryModel shortens what titles share) stays visible; a file name alone in the
    middle, so its end stays too."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        if index.data(LibraryModel.TitledRole):
            option.textElideMode = Qt.TextElideMode.ElideRight


class LibraryPanel(QWidget):
    sig_add_folder = Signal()
    sig_remove = Signal(list)  # root paths
    sig_cancel = Signal()
    sig_file_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = LibraryModel(self)
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setAccessibleName("Library")
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.setItemDelegate(_LibraryDelegate(self.tree))
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setAlternatingRowColors(False)
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        self.tree.header().resizeSection(1, 118)
        self.tree.activated.connect(self._activated)
        self.tree.selectionModel().selectionChanged.connect(self._update_buttons)
        self.model.rowsInserted.connect(self._expand_new_roots)
        self.add_button = QPushButton("Add folder…", self)
        self.add_button.setToolTip("Add a folder to the library (Ctrl+O); you can also drop folders on the window")
        self.add_button.clicked.connect(self.sig_add_folder)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setToolTip("Take the selected folder out of the library (its files stay on disk)")
        self.remove_button.clicked.connect(self._remove_clicked)
        self.remove_button.setEnabled(False)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setEnabled(False)
        self.progress = IndexProgressBox(self)
        self.progress.sig_cancel.connect(self.sig_cancel)
        self.progress.hide()
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.progress)

    def set_library(self, roots: list[str], files: list[LibraryFile], offline: tuple[str, ...] = ()) -> None:
        self.model.set_library(roots, files, offline)
        n = self.model.indexed_count()
        problems = len(self.model.problem_files())
        if not roots:
            self.summary.setText("No folders yet.")
        else:
            text = f"{n} file{'s' if n != 1 else ''} indexed in {len(roots)} folder{'s' if len(roots) != 1 else ''}"
            if problems:
                text += f"; {problems} could not be indexed (marked ⚠, hover for why)"
            if offline:
                text += f"; {len(offline)} folder{'s are' if len(offline) != 1 else ' is'} offline (files kept)"
            self.summary.setText(text + ".")
        self._update_buttons()

    def _expand_new_roots(self, parent: QModelIndex, first: int, last: int) -> None:
        if parent.isValid():
            return
        for row in range(first, last + 1):
            self.tree.expand(self.model.index(row, 0))

    def selected_roots(self) -> list[str]:
        roots = []
        for idx in self.tree.selectionModel().selectedRows(0):
            if idx.data(LibraryModel.KindRole) == "root":
                roots.append(idx.data(LibraryModel.PathRole))
        return roots

    def _update_buttons(self, *_: Any) -> None:
        self.remove_button.setEnabled(bool(self.selected_roots()))

    def _remove_clicked(self) -> None:
        roots = self.selected_roots()
        if roots:
            self.sig_remove.emit(roots)

    def _activated(self, index: QModelIndex) -> None:
        if index.data(LibraryModel.KindRole) == "file":
            self.sig_file_activated.emit(index.data(LibraryModel.PathRole))
