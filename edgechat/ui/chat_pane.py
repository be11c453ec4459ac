"""The chat pane: the transcript (or a first-run hint), a notice line, the input box, Send and
Stop."""

from __future__ import annotations

import os

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.engine import Scope, readable_formats
from edgechat.ui.answer_layout import tint
from edgechat.ui.transcript import TranscriptView


class ChatInput(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line; grows with its text up to a few lines."""

    sig_submit = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Ask a question about your documents…  (Enter to send, Shift+Enter for a new line)")
        self.setAccessibleName("Question")
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().contentsChanged.connect(self.updateGeometry)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.sig_submit.emit()
                return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:
        lines = max(2, min(8, self.document().blockCount() + (1 if self.document().size().width() else 0)))
        fm = self.fontMetrics()
        return QSize(200, int(lines * fm.lineSpacing() + 2 * self.frameWidth() + 12))


class DropHint(QWidget):
    """The first-run state: a big dashed drop target."""

    sig_add_folder = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Drop folders here to add them to your library")
        f = self.title.font()
        f.setPointSizeF(f.pointSizeF() * 1.5)
        f.setBold(True)
        self.title.setFont(f)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setWordWrap(True)
        self.body = QLabel(
            f"{readable_formats()} are read. They are indexed on this "
            "computer, in the background; nothing leaves it. You can ask questions as soon as the first "
            "files are done.")
        self.body.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.body.setWordWrap(True)
        self.button = QPushButton("Add folder…")
        self.button.clicked.connect(self.sig_add_folder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(40, 40, 40, 40)
        layout.addStretch(1)
        layout.addWidget(self.title)
        layout.addSpacing(8)
        layout.addWidget(self.body)
        layout.addSpacing(14)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)
        self.active = False  # a drag is over the window

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        hl = self.palette().color(QPalette.ColorRole.Highlight)
        pen = QPen(tint(hl, 255 if self.active else 150), 2.5, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(tint(hl, 40 if self.active else 14))
        painter.drawRoundedRect(self.rect().adjusted(18, 18, -18, -18), 18, 18)


def scope_label(scope: Scope | None) -> str:
    """What a question searches, in words: the whole library, a folder, a document, or the
    documents of this chat's sources."""
    if scope is None:
        return "Whole library"
    if scope.kind == "documents":
        n = len(scope.paths)
        return f"This chat's sources ({n} document{'s' if n != 1 else ''})"
    name = os.path.basename(scope.path.rstrip("/\\")) or scope.path
    return f"Folder: {name}" if scope.kind == "folder" else f"Document: {name}"


class ChatPane(QWidget):
    sig_send = Signal(str)
    sig_stop = Signal()
    sig_scope_changed = Signal(object)  # Scope | None: what the next question searches

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.transcript = TranscriptView(self)
        self.transcript.setAccessibleName("Conversation")
        self.drop_hint = DropHint(self)
        self.welcome = QLabel("Ask a question about your documents.\nAnswers cite their sources as numbered chips: "
                              "click one to see the passage.")
        self.welcome.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.welcome.setWordWrap(True)
        self.welcome.setEnabled(False)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.drop_hint)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.transcript)

        self.notice = QLabel("")
        self.notice.setObjectName("notice")
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.RichText)
        self.notice.setFrameShape(QFrame.Shape.StyledPanel)
        self.notice.setContentsMargins(8, 4, 8, 4)
        self.notice.setAutoFillBackground(True)
        self.notice.hide()
        self.status = QLabel("")
        self.status.setEnabled(False)
        self.status.hide()

        self.input = ChatInput(self)
        self.input.sig_submit.connect(self._submit)
        self.send_button = QPushButton("Send", self)
        self.send_button.setToolTip("Send the question (Enter)")
        self.send_button.setDefault(False)
        self.send_button.clicked.connect(self._submit)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.clicked.connect(self.sig_stop)
        self.stop_button.setEnabled(False)
        # What the next question searches: the whole library, a folder of it, the document open
        # in the source pane, or the documents this chat's answers came from. Saved with the chat.
        self.scope_box = QComboBox(self)
        self.scope_box.setAccessibleName("What the question searches")
        self.scope_box.setToolTip("What the next question searches")
        self.scope_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.scope_box.currentIndexChanged.connect(lambda _i: self.sig_scope_changed.emit(self.scope()))
        self._scopes: list[Scope | None] = []
        self._folders: list[str] = []
        self._document: str | None = None
        self._chat_documents: tuple[str, ...] = ()
        scope_label_widget = QLabel("&Searches:", self)  # Alt+S
        scope_label_widget.setBuddy(self.scope_box)
        scope_row = QHBoxLayout()
        scope_row.addWidget(scope_label_widget)
        scope_row.addWidget(self.scope_box)
        scope_row.addStretch(1)
        self.set_scope_choices([], None)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.notice)
        layout.addLayout(scope_row)
        layout.addLayout(row)

    # ---------------------------------------------------------------- scope

    def scope(self) -> Scope | None:
        """What the next question searches (None: the whole library)."""
        i = self.scope_box.currentIndex()
        return self._scopes[i] if 0 <= i < len(self._scopes) else None

    def set_scope_choices(self, folders: list[str], document: str | None) -> None:
        """The choices: the whole library, each folder, the open document, and the documents of
        this chat's sources. The current choice is kept when it is still offered."""
        self._folders, self._document = list(folders), document
        self._offer(self.scope())

    def set_chat_documents(self, paths: list[str]) -> None:
        """The documents this chat's answers came from, offered as a choice when there are any.
        A choice of them already made stays as it was made (answers searched within them come
        from them: the set does not grow while it is searched)."""
        self._chat_documents = tuple(dict.fromkeys(paths))
        self._offer(self.scope())

    def _documents_scope(self) -> Scope | None:
        docs = self._chat_documents
        return Scope("documents", os.path.commonpath(docs) if len(docs) > 1 else docs[0], docs) if docs else None

    def _offer(self, current: Scope | None) -> None:
        choices: list[Scope | None] = [None, *(Scope("folder", f) for f in self._folders)]
        if self._document:
            choices.append(Scope("file", self._document))
        if self._chat_documents:
            choices.append(self._documents_scope())
        if current is not None and current not in choices:
            choices.append(current)  # a chat's saved scope stays shown until changed
        self._fill(choices, current)

    def set_scope(self, scope: Scope | None) -> None:
        """Show `scope` as the current choice (a saved chat's), adding it when it is not offered."""
        choices = list(self._scopes)
        if scope not in choices:
            choices.append(scope)
        self._fill(choices, scope)

    def _fill(self, choices: list[Scope | None], current: Scope | None) -> None:
        self.scope_box.blockSignals(True)
        self.scope_box.clear()
        self._scopes = choices
        for scope in choices:
            self.scope_box.addItem(scope_label(scope))
            if scope is not None:
                self.scope_box.setItemData(self.scope_box.count() - 1, "\n".join(scope.roots()),
                                           Qt.ItemDataRole.ToolTipRole)
        self.scope_box.setCurrentIndex(choices.index(current) if current in choices else 0)
        self.scope_box.blockSignals(False)

    def _submit(self) -> None:
        text = self.input.toPlainText().strip()
        if not text:
            return
        self.input.clear()
        self.sig_send.emit(text)

    def set_answering(self, answering: bool) -> None:
        self.stop_button.setEnabled(answering)

    def set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def set_notice(self, html_text: str) -> None:
        self.notice.setText(html_text)
        self.notice.setVisible(bool(html_text))

    def show_state(self, *, has_documents: bool, has_turns: bool) -> None:
        if has_turns:
            self.stack.setCurrentWidget(self.transcript)
        elif not has_documents:
            self.stack.setCurrentWidget(self.drop_hint)
        else:
            self.stack.setCurrentWidget(self.welcome)
