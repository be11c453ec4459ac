"""Settings kept with QSettings, and the dialog that edits them.

Where: the platform's usual place for "EdgeChat" settings, or, when $EDGECHAT_HOME is set
(portable use, tests), an INI file in it, so a test never writes a real user's settings."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QLabel,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.engine import (
    EXTRACTIVE,
    ChunkSettings,
    describe_error,
    import_language_model,
    model_privacy_note,
)

log = logging.getLogger(__name__)

ANSWER_LENGTHS = [("Short", 160), ("Medium", 384), ("Long", 768)]


def make_qsettings() -> QSettings:
    home = os.environ.get("EDGECHAT_HOME")
    if home:
        return QSettings(str(Path(home).expanduser() / "settings.ini"), QSettings.Format.IniFormat)
    return QSettings("EdgeChat", "EdgeChat")


@dataclass
class AppSettings:
    model: str = ""  # "" = the installed model marked active, "extractive", or a model's name
    max_new_tokens: int = 384
    sources: int = 5
    temperature: float = 0.0
    chunk_size: int = 200
    chunk_overlap: int = 40

    @classmethod
    def load(cls, qs: QSettings) -> "AppSettings":
        d = cls()

        def get(key: str, default: Any, kind: type) -> Any:
            try:
                value = qs.value(f"answer/{key}", default)
                return kind(value)
            except (TypeError, ValueError):
                return default

        s = cls(
            model=str(get("model", d.model, str)),
            max_new_tokens=get("max_new_tokens", d.max_new_tokens, int),
            sources=get("sources", d.sources, int),
            temperature=get("temperature", d.temperature, float),
            chunk_size=get("chunk_size", d.chunk_size, int),
            chunk_overlap=get("chunk_overlap", d.chunk_overlap, int),
        )
        s.sources = min(20, max(1, s.sources))
        s.max_new_tokens = min(4096, max(16, s.max_new_tokens))
        s.temperature = min(2.0, max(0.0, s.temperature))
        s.chunk_size = min(512, max(32, s.chunk_size))
        s.chunk_overlap = min(s.chunk_size // 2, max(0, s.chunk_overlap))
        return s

    def save(self, qs: QSettings) -> None:
        for key, value in self.__dict__.items():
            qs.setValue(f"answer/{key}", value)
        qs.sync()

    def chunk_settings(self) -> ChunkSettings:
        return ChunkSettings(size=self.chunk_size, overlap=self.chunk_overlap)


class ImportSignals(QObject):
    """Carries a model import's progress and result from its thread to the dialog's."""

    status = Signal(str)
    finished = Signal(str, str, str)  # name, label, error ("" when it worked)


def import_in_background(folder: str, signals: ImportSignals) -> threading.Thread:
    """Import a model folder on a thread of its own (copying and checking a model takes a
    while); its steps and its result arrive through `signals`. The settings dialog and the
    first-run choice both import this way."""

    def work() -> None:
        try:
            name, label = import_language_model(folder, progress=signals.status.emit)
            signals.finished.emit(name, label, "")
        except Exception as e:  # noqa: BLE001 - shown to the user
            signals.finished.emit("", "", describe_error(e))

    thread = threading.Thread(target=work, name="import-model", daemon=True)
    thread.start()
    return thread


class SettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, models: list[tuple[str, str]], active: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setModal(True)
        self.model_box = QComboBox(self)
        self.model_box.setAccessibleName("Model")
        if models:
            for name, label in models:
                self.model_box.addItem(label + ("  — active" if name == active else ""), name)
        self.model_box.addItem("Extractive (no model): quote the best sentences of the sources", EXTRACTIVE)
        want = settings.model or active or (models[0][0] if models else EXTRACTIVE)
        i = self.model_box.findData(want)
        self.model_box.setCurrentIndex(i if i >= 0 else self.model_box.count() - 1)
        self._no_models = not models
        self.model_note = model_note = QLabel(self)
        model_note.setWordWrap(True)
        self.model_box.currentIndexChanged.connect(lambda *_: self._update_model_note())
        self._update_model_note()
        self.import_button = QPushButton("&Import a model folder\u2026", self)
        self.import_button.setToolTip("Copy an onnxruntime-genai model folder into EdgeChat's models "
                                      "(it is checked first: it must load and write)")
        self.import_button.clicked.connect(self.choose_model_folder)
        self.server_button = QPushButton("Use a model &server\u2026", self)
        self.server_button.setToolTip("Answers written by a model on an OpenAI-compatible server (Ollama, LM Studio, "
                                      "llama.cpp, vLLM), on this computer or another")
        self.server_button.clicked.connect(self.add_server)
        self.server_dialog: QDialog | None = None
        self._import_done = ImportSignals(self)
        self._import_done.finished.connect(self._on_imported)
        self._import_done.status.connect(self._on_import_status)
        self._progress: QProgressDialog | None = None
        self.import_error = ""

        self.length_box = QComboBox(self)
        for label, tokens in ANSWER_LENGTHS:
            self.length_box.addItem(f"{label} (up to {tokens} tokens)", tokens)
        j = min(range(len(ANSWER_LENGTHS)), key=lambda k: abs(ANSWER_LENGTHS[k][1] - settings.max_new_tokens))
        self.length_box.setCurrentIndex(j)
        self.sources_spin = QSpinBox(self)
        self.sources_spin.setRange(1, 20)
        self.sources_spin.setValue(settings.sources)
        self.temperature_spin = QDoubleSpinBox(self)
        self.temperature_spin.setRange(0.0, 2.0)
        self.temperature_spin.setSingleStep(0.1)
        self.temperature_spin.setDecimals(2)
        self.temperature_spin.setValue(settings.temperature)
        self.temperature_spin.setToolTip("0 gives the same answer every time; higher values vary more")
        self.chunk_spin = QSpinBox(self)
        self.chunk_spin.setRange(32, 512)
        self.chunk_spin.setSuffix(" tokens")
        self.chunk_spin.setValue(settings.chunk_size)
        self.overlap_spin = QSpinBox(self)
        self.overlap_spin.setRange(0, 256)
        self.overlap_spin.setSuffix(" tokens")
        self.overlap_spin.setValue(settings.chunk_overlap)

        answer = QGroupBox("Answers", self)
        form = QFormLayout(answer)
        form.addRow("&Model:", self.model_box)
        form.addRow("", model_note)
        form.addRow("", self.import_button)
        form.addRow("", self.server_button)
        form.addRow("Answer &length:", self.length_box)
        form.addRow("&Sources per answer:", self.sources_spin)
        form.addRow("&Temperature:", self.temperature_spin)
        chunking = QGroupBox("Indexing", self)
        cform = QFormLayout(chunking)
        cform.addRow("Passage si&ze:", self.chunk_spin)
        cform.addRow("O&verlap:", self.overlap_spin)
        note = QLabel("Passage size applies to files indexed from now on; use Library › Rebuild index "
                      "to apply it to every file.")
        note.setWordWrap(True)
        note.setEnabled(False)
        cform.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(answer)
        layout.addWidget(chunking)
        layout.addWidget(buttons)

    def _update_model_note(self) -> None:
        name = str(self.model_box.currentData() or "")
        remote = model_privacy_note(name) if name and name != EXTRACTIVE else ""
        if remote:
            text = remote
        elif self._no_models:
            text = ("No language model is installed: answers quote your documents. Download one with File \u203a "
                    "Choose a model\u2026, import a model folder (onnxruntime-genai), use a model server, or run "
                    "<code>scripts/setup.sh</code> from the source, then choose it here.")
        else:
            text = "Models run on this computer; nothing is sent anywhere."
        self.model_note.setText(text)
        self.model_note.setStyleSheet("color: #8a5a00;" if remote else "")
        self.model_note.setEnabled(bool(remote) or not self._no_models)

    # ---------------------------------------------------------------- a model server

    def add_server(self) -> None:
        """The server dialog (window-modal, the event loop keeps running); a server kept there
        is added to the list and chosen."""
        from edgechat.ui.server_dialog import ServerDialog

        dialog = ServerDialog(self)
        dialog.accepted.connect(lambda: self._server_added(dialog.saved_name, dialog.saved_label))
        self.server_dialog = dialog
        dialog.open()

    def _server_added(self, name: str, label: str) -> None:
        if not name:
            return
        i = self.model_box.findData(name)
        if i >= 0:
            self.model_box.removeItem(i)
        self.model_box.insertItem(max(0, self.model_box.count() - 1), label, name)
        self._no_models = False
        self.model_box.setCurrentIndex(self.model_box.findData(name))
        self._update_model_note()

    # ---------------------------------------------------------------- importing a model

    def choose_model_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose an onnxruntime-genai model folder")
        if folder:
            self.import_folder(folder)

    def import_folder(self, folder: str) -> None:
        """Import off the window's thread (copying and checking a model takes a while), with a
        busy progress dialog that names the step."""
        self.import_button.setEnabled(False)
        self.import_error = ""
        self._progress = QProgressDialog("Importing the model\u2026", "", 0, 0, self)
        self._progress.setWindowTitle("Import a model")
        self._progress.setCancelButton(None)
        self._progress.setWindowModality(Qt.WindowModality.WindowModal)
        self._progress.setMinimumDuration(0)
        self._progress.show()
        import_in_background(folder, self._import_done)

    def _on_import_status(self, text: str) -> None:
        if self._progress is not None:
            self._progress.setLabelText(text)

    def _on_imported(self, name: str, label: str, error: str) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None
        self.import_button.setEnabled(True)
        if error:
            self.import_error = error
            QMessageBox.warning(self, "Import a model", f"The model was not imported: {error}")
            return
        self.model_box.insertItem(max(0, self.model_box.count() - 1), label, name)
        self.model_box.setCurrentIndex(self.model_box.findData(name))

    def result_settings(self) -> AppSettings:
        size = self.chunk_spin.value()
        return AppSettings(
            model=str(self.model_box.currentData()),
            max_new_tokens=int(self.length_box.currentData()),
            sources=self.sources_spin.value(),
            temperature=self.temperature_spin.value(),
            chunk_size=size,
            chunk_overlap=min(self.overlap_spin.value(), size // 2),
        )
