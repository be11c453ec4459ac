"""Use a model server: the dialog that configures an OpenAI-compatible server (Ollama, LM Studio,
llama.cpp's server, vLLM) to write the answers. Opened from Settings and from the first-run
model choice.

The address, an optional API key (kept in the system keyring), the model picked from the
server's own list (GET /v1/models), and the context the model sees when the server does not
say. "Test" checks each step (reached, the model served, the key accepted, it writes) and
says which failed. Where the answers will be written is shown as the address is typed: a
server that is not on this computer is named, with what is sent there.

Every request runs on a thread of its own; results come back through `_Signals`. Nothing is
contacted until the user presses List models, Test or Use this server.
"""

from __future__ import annotations

import html
import logging
import threading

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.engine import (
    ServerCheck,
    add_model_server,
    check_model_server,
    describe_error,
    server_models,
    server_privacy_note,
)

log = logging.getLogger(__name__)


class _Signals(QObject):
    listed = Signal(object, str)  # [model ids], error
    checked = Signal(object)  # ServerCheck
    saved = Signal(str, str, str)  # name, label, error


class ServerDialog(QDialog):
    """Emits nothing itself: after `accept()`, `saved_name` and `saved_label` name the server
    kept (it is not made active here: the caller's settings choose it)."""

    def __init__(self, parent: QWidget | None = None, *, name: str = "server", url: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Use a model server")
        self.setObjectName("serverDialog")
        self.saved_name = ""
        self.saved_label = ""
        self.last_check: ServerCheck | None = None
        self.last_error = ""
        self._busy = ""

        intro = QLabel("A model server on this computer or another one (Ollama, LM Studio, llama.cpp's server, "
                       "vLLM: anything that speaks the OpenAI API) writes the answers; your documents are "
                       "searched and every sentence is checked here, as with a model on this computer.", self)
        intro.setWordWrap(True)
        self.name_edit = QLineEdit(name, self)
        self.name_edit.setAccessibleName("Name")
        self.url_edit = QLineEdit(url, self)
        self.url_edit.setPlaceholderText("http://localhost:11434/v1")
        self.url_edit.setAccessibleName("Server address")
        self.key_edit = QLineEdit(self)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("none")
        self.key_edit.setAccessibleName("API key")
        self.key_edit.setToolTip("Kept in the system keyring, never in EdgeChat's files")
        self.model_box = QComboBox(self)
        self.model_box.setEditable(True)
        self.model_box.setAccessibleName("Model")
        self.list_button = QPushButton("&List models", self)
        self.list_button.setToolTip("Ask the server which models it serves")
        self.list_button.clicked.connect(self.list_models)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_box, 1)
        model_row.addWidget(self.list_button)
        self.context_spin = QSpinBox(self)
        self.context_spin.setRange(512, 1_048_576)
        self.context_spin.setSingleStep(1024)
        self.context_spin.setValue(4096)
        self.context_spin.setSuffix(" tokens")
        self.context_spin.setToolTip("Used when the server does not say how much its model sees")
        self.where_label = QLabel(self)
        self.where_label.setWordWrap(True)
        self.where_label.setAccessibleName("Where answers are written")
        self.test_button = QPushButton("&Test", self)
        self.test_button.setToolTip("Check that the server answers, serves the model, accepts the key and writes")
        self.test_button.clicked.connect(self.test)
        self.result_label = QLabel(self)
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.setAccessibleName("Test result")

        form = QFormLayout()
        form.addRow("&Name:", self.name_edit)
        form.addRow("&Address:", self.url_edit)
        form.addRow("API &key:", self.key_edit)
        model_label = QLabel("&Model:", self)
        model_label.setBuddy(self.model_box)  # a row of two widgets: the label needs its buddy named
        form.addRow(model_label, model_row)
        form.addRow("&Context:", self.context_spin)
        self.buttons = QDialogButtonBox(self)
        self.use_button = self.buttons.addButton("&Use this server", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.where_label)
        layout.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.result_label)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(520)

        self._signals = _Signals(self)
        self._signals.listed.connect(self._on_listed)
        self._signals.checked.connect(self._on_checked)
        self._signals.saved.connect(self._on_saved)
        self.url_edit.textChanged.connect(self._update_where)
        self._update_where()

    # ---------------------------------------------------------------- what is typed

    def url(self) -> str:
        return self.url_edit.text().strip()

    def model(self) -> str:
        return self.model_box.currentText().strip()

    def _update_where(self) -> None:
        note = server_privacy_note(self.url()) if self.url() else ""
        self.where_label.setText(note)
        self.where_label.setStyleSheet("" if not note or "nothing leaves" in note else "color: #8a5a00;")

    def _set_busy(self, what: str) -> None:
        self._busy = what
        for w in (self.list_button, self.test_button, self.use_button):
            w.setEnabled(not what)

    @property
    def busy(self) -> bool:
        return bool(self._busy)

    def _show(self, text: str, error: bool = False) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet("color: #b00020;" if error else "")
        if error:
            self.last_error = text

    def _run(self, what: str, work) -> None:
        self._set_busy(what)
        threading.Thread(target=work, name=f"model-server-{what}", daemon=True).start()

    # ---------------------------------------------------------------- the server's models

    def list_models(self) -> None:
        url, key, signals = self.url(), self.key_edit.text(), self._signals
        self._show("Asking the server for its models\u2026")

        def work() -> None:
            try:
                signals.listed.emit(server_models(url, key), "")
            except Exception as e:  # noqa: BLE001 - shown to the user
                signals.listed.emit([], describe_error(e))

        self._run("list", work)

    def _on_listed(self, ids: list[str], error: str) -> None:
        self._set_busy("")
        if error:
            self._show(error, error=True)
            return
        typed = self.model()
        self.model_box.clear()
        self.model_box.addItems(ids)
        if typed in ids or not ids:
            self.model_box.setCurrentText(typed)
        self._show(f"The server serves {len(ids)} model(s)." if ids else "The server serves no model.", error=not ids)

    # ---------------------------------------------------------------- test

    def test(self) -> None:
        url, model, key, ctx, signals = self.url(), self.model(), self.key_edit.text(), self.context_spin.value(), \
            self._signals
        self._show("Testing the server\u2026")

        def work() -> None:
            signals.checked.emit(check_model_server(url, model, key, ctx))

        self._run("test", work)

    def _on_checked(self, check: ServerCheck) -> None:
        self._set_busy("")
        self.last_check = check
        if check.models and self.model_box.count() == 0:
            self.model_box.addItems([m.id for m in check.models])
            self.model_box.setCurrentText(self.model() or check.models[0].id)
        marks = [("\u2714 " if not (check.error and i == len(check.lines) - 1) else "\u2716 ") + html.escape(line)
                 for i, line in enumerate(check.lines)]
        self.result_label.setText("<br>".join(marks))
        self.result_label.setStyleSheet("" if check.ok else "color: #b00020;")
        if check.error:
            self.last_error = check.error

    # ---------------------------------------------------------------- keep it

    def save(self) -> None:
        name, url, model, key, ctx, signals = (self.name_edit.text().strip(), self.url(), self.model(),
                                               self.key_edit.text(), self.context_spin.value(), self._signals)
        if not url or not model:
            self._show("Give the server's address and choose its model (List models asks the server).", error=True)
            return

        def work() -> None:
            try:
                saved, label = add_model_server(name, url, model, api_key=key or None, context_length=ctx)
                signals.saved.emit(saved, label, "")
            except Exception as e:  # noqa: BLE001 - shown to the user
                signals.saved.emit("", "", describe_error(e))

        self._run("save", work)

    def _on_saved(self, name: str, label: str, error: str) -> None:
        self._set_busy("")
        if error:
            self._show(f"The server was not kept: {error}", error=True)
            return
        self.saved_name, self.saved_label = name, label
        self.accept()
