"""Choosing a language model: offered once on first run, and again from File › Choose a model.

The choices: each model the catalog can download (title, size, licence, description),
importing a model folder (the settings dialog's import), or no model (extractive answers,
quoted from the documents). Models that only the developer set-up can build (scripts/setup.sh
builds them from PyPI with torch) are listed as such, with the reason, and no button.

A download runs on a thread of its own (edgechat.core.engine.download_language_model): a
progress bar with bytes, speed and time left; Cancel keeps what was downloaded and the button
then offers to resume; sizes and sha256 are checked and the model must load before it is
installed; a server that cannot be reached gets one plain sentence. The choice made is kept in
the app's QSettings (`CHOICE_KEY`), so the dialog is not offered again on the next start.
"""

from __future__ import annotations

import html
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QFont
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.engine import (
    CatalogEntry,
    DownloadCancelled,
    DownloadProgress,
    HostUnreachable,
    can_download,
    describe_error,
    download_language_model,
    partial_download,
)
from edgechat.ui.settings import ImportSignals, import_in_background

log = logging.getLogger(__name__)

CHOICE_KEY = "firstrun/model_choice"  # "extractive", "download:<name>", "import:<name>", "server:<name>" or "later"
IMPORT = "import"
SERVER = "server"
EXTRACTIVE_CHOICE = "extractive"

BUILD_ONLY_REASON = ("built on a developer's computer from PyPI by scripts/setup.sh (it needs torch); no "
                     "converted folder is hosted anywhere, so the app cannot download it")


def model_choice_made(qs: QSettings) -> str:
    """What the user chose before ("" when the dialog was never answered)."""
    return str(qs.value(CHOICE_KEY, "") or "")


def record_model_choice(qs: QSettings, choice: str) -> None:
    qs.setValue(CHOICE_KEY, choice)
    qs.sync()


def human_bytes(n: float, approx: bool = False) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.1f} GB" if approx else f"{n / 1e9:.2f} GB"
    if n >= 1e6:
        return f"{n / 1e6:.0f} MB"
    if n >= 1e3:
        return f"{n / 1e3:.0f} kB"
    return f"{n:.0f} bytes"


def human_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def unreachable_message(host: str, reason: str) -> str:
    return (f"Could not reach {host} \u2014 check your internet connection; nothing was changed. Cause: {reason}. "
            "A model folder copied from another computer can be imported instead.")


def host_of(entry: CatalogEntry) -> str:
    if not entry.files:
        return ""
    return urlsplit(entry.files[0].url).hostname or ""


class _DownloadSignals(QObject):
    """Carries a download's progress and result from its thread to the dialog's."""

    progress = Signal(object)  # DownloadProgress
    status = Signal(str)
    finished = Signal(str, str, str, str)  # name, label, outcome ("", "cancelled", "unreachable", "failed"), message


class ModelChoiceDialog(QDialog):
    """The first-run model choice. Emits `sig_model_ready(name)` once a downloaded or imported
    model is installed (the window then answers with it) and `sig_extractive()` when the user
    chooses to answer without a model. `offers` is the catalog to show (tests serve their own);
    `download_dir` where a download's parts are kept (default: the app's cache)."""

    sig_model_ready = Signal(str)
    sig_extractive = Signal()

    def __init__(self, offers: Sequence[CatalogEntry], qsettings: QSettings, parent: QWidget | None = None, *,
                 download_dir: str | Path | None = None, first_run: bool = True) -> None:
        super().__init__(parent)
        self.setWindowTitle("Choose a language model")
        self.setObjectName("modelChoiceDialog")
        self.qsettings = qsettings
        self.download_dir = download_dir
        self.downloadable = [e for e in offers if can_download(e)]
        self.build_only = [e for e in offers if not can_download(e)]
        self.installed = ""  # the model installed by this dialog
        self.last_error = ""  # the last failure shown, for tests
        self._cancel: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._busy = ""  # "download" or "import" while one runs
        self._rates: deque[tuple[float, int]] = deque()
        self._entry: CatalogEntry | None = None  # the model being downloaded
        self.server_dialog: QDialog | None = None

        heading, intro = self._build_choices(first_run)
        buttons = self._build_controls()
        self._lay_out(heading, intro, buttons)
        self._connect_signals()

    def _build_choices(self, first_run: bool) -> tuple[QLabel, QLabel]:
        """The heading, the introduction and a radio button per choice (self.options)."""
        heading = QLabel("Choose how EdgeChat writes answers", self)
        font = QFont(heading.font())
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        heading.setFont(font)
        intro = QLabel(
            ("No language model is installed yet. " if first_run else "")
            + "A language model runs on this computer and writes answers in its own words, citing your "
            "documents; without one, answers quote the most relevant sentences of your documents. "
            "Nothing leaves this computer unless you choose a download. You can change this later "
            "(File \u203a Choose a model).", self)
        intro.setWordWrap(True)

        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.options = QVBoxLayout()
        self.options.setSpacing(2)
        self.radios: dict[str, QRadioButton] = {}
        used = set("druncfqis")  # mnemonics of the buttons and of the fixed choices
        for entry in self.downloadable:
            size = f"about {human_bytes(entry.approx_bytes, approx=True)} to download"
            where = host_of(entry)
            detail = (f"{size} \u00b7 {html.escape(entry.license)} licence \u00b7 from {html.escape(where)} over "
                      f"{'HTTPS' if entry.files[0].url.startswith('https:') else 'HTTP'}<br>"
                      f"{html.escape(entry.description)}")
            self._add_option(entry.name, _mnemonic(entry.title, used), detail)
        self._add_option(IMPORT, "&Import a model folder\u2026",
                         "An onnxruntime-genai folder you already have: one that scripts/setup.sh built, or "
                         "one copied from another computer. It is checked (it must load and write) before "
                         "it is used.")
        self._add_option(SERVER, "Use a model &server\u2026",
                         "A model that an OpenAI-compatible server runs (Ollama, LM Studio, llama.cpp's server, "
                         "vLLM), on this computer or a stronger one. When it is on another computer, each question "
                         "and the passages found for it are sent there; your documents are searched and the "
                         "answers checked here.")
        self._add_option(EXTRACTIVE_CHOICE, "No model: answer with &quotes from my documents (extractive)",
                         "Works right away and offline; nothing is downloaded. Answers are the sentences of "
                         "your documents that best match the question, with their sources.")

        self.build_note = QLabel(self)
        self.build_note.setWordWrap(True)
        self.build_note.setTextFormat(Qt.TextFormat.RichText)
        if self.build_only:
            items = "".join(f"<li>{html.escape(e.title)} ({html.escape(e.license)})</li>" for e in self.build_only)
            self.build_note.setText(
                f"<b>Not downloadable in the app:</b><ul style='margin-top:2px; margin-bottom:2px'>{items}</ul>"
                f"These are {BUILD_ONLY_REASON}. If you have such a folder, choose <i>Import a model "
                "folder</i>.")
        self.build_note.setVisible(bool(self.build_only))
        return heading, intro

    def _build_controls(self) -> QHBoxLayout:
        """The download's progress and status, and the row of buttons (returned)."""
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName("Download progress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setVisible(False)
        keep_place(self.progress)  # the dialog does not change size when a download starts
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setAccessibleName("Download status")
        self.status.setMinimumHeight(self.status.fontMetrics().lineSpacing() * 3)
        self.status.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

        self.action_button = QPushButton(self)
        self.action_button.setDefault(True)
        self.action_button.setAutoDefault(True)
        self.action_button.clicked.connect(self._act)
        self.cancel_button = QPushButton("&Cancel download", self)
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.setToolTip("Stop the download; what was downloaded is kept, and the download "
                                      "resumes from there next time")
        self.cancel_button.clicked.connect(self.cancel_download)
        self.cancel_button.setVisible(False)
        self.close_button = QPushButton("Not &now", self)
        self.close_button.setAutoDefault(False)
        self.close_button.setToolTip("Close; answers quote your documents until a model is installed")
        self.close_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.action_button)
        return buttons

    def _lay_out(self, heading: QLabel, intro: QLabel, buttons: QHBoxLayout) -> None:
        """The choices scroll when the screen is small; the heading, the progress and the buttons stay."""
        line = QFrame(self)
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        inner = QWidget(self)
        inner_layout = QVBoxLayout(inner)
        inner_layout.setContentsMargins(0, 0, 0, 0)
        inner_layout.addLayout(self.options)
        inner_layout.addWidget(line)
        inner_layout.addWidget(self.build_note)
        inner_layout.addStretch(1)
        self.choices_area = QScrollArea(self)
        self.choices_area.setWidget(inner)
        self.choices_area.setWidgetResizable(True)
        self.choices_area.setFrameShape(QFrame.Shape.NoFrame)
        self.choices_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.choices_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes from the choices to the buttons
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(intro)
        layout.addSpacing(6)
        layout.addWidget(self.choices_area, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.setMinimumWidth(560)
        self.resize(720, 640)  # within the screen: a dialog is never made taller than it

    def _connect_signals(self) -> None:
        """The worker threads' signals, and the first choice checked and focused."""
        self._download_signals = _DownloadSignals(self)
        self._download_signals.progress.connect(self._on_progress)
        self._download_signals.status.connect(self._on_status)
        self._download_signals.finished.connect(self._on_download_finished)
        self._import_signals = ImportSignals(self)
        self._import_signals.status.connect(self._on_status)
        self._import_signals.finished.connect(self._on_imported)

        self.group.buttonToggled.connect(lambda *_: self._update_action())
        first = self.radios[self.downloadable[0].name] if self.downloadable else self.radios[EXTRACTIVE_CHOICE]
        first.setChecked(True)
        # Tab order: the choices (one stop; arrows move between them), then the buttons.
        self.setTabOrder(first, self.action_button)
        self.setTabOrder(self.action_button, self.close_button)
        self.setTabOrder(self.close_button, self.cancel_button)
        first.setFocus()
        self._update_action()

    def _add_option(self, key: str, text: str, detail_html: str) -> None:
        radio = QRadioButton(text, self)
        radio.setObjectName(f"choice-{key}")
        radio.setProperty("choice", key)
        self.group.addButton(radio)
        self.radios[key] = radio
        detail = QLabel(detail_html, self)
        detail.setWordWrap(True)
        detail.setTextFormat(Qt.TextFormat.RichText)
        detail.setContentsMargins(24, 0, 0, 8)
        detail.setBuddy(radio)
        radio.setAccessibleDescription(html.unescape(re.sub(r"<[^>]+>", " ", detail_html)).replace("  ", " "))
        self.options.addWidget(radio)
        self.options.addWidget(detail)

    # ---------------------------------------------------------------- what is chosen

    def choice(self) -> str:
        b = self.group.checkedButton()
        return str(b.property("choice")) if b is not None else ""

    def select(self, key: str) -> None:
        self.radios[key].setChecked(True)

    def entry(self, name: str) -> CatalogEntry:
        return next(e for e in self.downloadable if e.name == name)

    def _update_action(self) -> None:
        key = self.choice()
        b = self.action_button
        if self.installed:
            b.setText("&Close")
            self.close_button.setVisible(False)
            for radio in self.radios.values():
                radio.setEnabled(False)  # done: File › Choose a model opens the choice again
            return
        if key == IMPORT:
            b.setText("Choose the &folder\u2026")
        elif key == SERVER:
            b.setText("Set up the &server\u2026")
        elif key == EXTRACTIVE_CHOICE:
            b.setText("&Use quotes only")
        elif key:
            entry = self.entry(key)
            kept = partial_download(entry, self.download_dir)
            b.setText("&Resume download" if kept else f"&Download (about {human_bytes(entry.approx_bytes, True)})")
            b.setToolTip(f"{human_bytes(kept)} already downloaded: the download continues from there"
                         if kept else "")

    def _act(self) -> None:
        if self.installed:
            self.accept()
            return
        key = self.choice()
        if key == IMPORT:
            folder = QFileDialog.getExistingDirectory(self, "Choose an onnxruntime-genai model folder")
            if folder:
                self.import_folder(folder)
        elif key == SERVER:
            self.open_server_dialog()
        elif key == EXTRACTIVE_CHOICE:
            self.choose_extractive()
        elif key:
            self.start_download(self.entry(key))

    def choose_extractive(self) -> None:
        record_model_choice(self.qsettings, EXTRACTIVE_CHOICE)
        self.sig_extractive.emit()
        self.accept()

    # ---------------------------------------------------------------- working

    @property
    def busy(self) -> bool:
        return bool(self._busy)

    def _set_busy(self, what: str) -> None:
        self._busy = what
        for radio in self.radios.values():
            radio.setEnabled(not what)
        self.action_button.setEnabled(not what)
        self.cancel_button.setVisible(what == "download")
        self.cancel_button.setEnabled(what == "download")
        self.close_button.setVisible(what != "download")  # Cancel download (or Escape) stops it
        self.close_button.setText("Close" if what else "Not &now")
        if what == "download":
            self.cancel_button.setFocus()
        elif what:
            self.close_button.setFocus()

    def _show_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b00020;" if error else "")

    def start_download(self, entry: CatalogEntry) -> None:
        """Download `entry` on a thread of its own (resuming what an earlier try kept)."""
        if self._busy:
            return
        self._entry = entry
        self.last_error = ""
        self._cancel = threading.Event()
        self._rates.clear()
        kept = partial_download(entry, self.download_dir)
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("%p%")
        self.progress.setVisible(True)
        self._show_status(f"Resuming the download of {entry.title} from {human_bytes(kept)}\u2026" if kept else
                          f"Connecting to {host_of(entry)}\u2026")
        self._set_busy("download")
        signals, cancel, download_dir = self._download_signals, self._cancel, self.download_dir

        def work() -> None:
            try:
                name, label = download_language_model(entry, progress=signals.progress.emit,
                                                      status=signals.status.emit, cancel=cancel,
                                                      download_dir=download_dir)
                signals.finished.emit(name, label, "", "")
            except DownloadCancelled as e:
                signals.finished.emit("", "", "cancelled", str(e))
            except HostUnreachable as e:
                signals.finished.emit("", "", "unreachable", unreachable_message(e.host, e.reason))
            except Exception as e:  # noqa: BLE001 - shown to the user
                log.warning("downloading %s failed: %s", entry.name, e)
                signals.finished.emit("", "", "failed", describe_error(e))

        self._thread = threading.Thread(target=work, name="download-model", daemon=True)
        self._thread.start()

    def cancel_download(self) -> None:
        if self._cancel is not None and self._busy == "download":
            self._cancel.set()
            self.cancel_button.setEnabled(False)
            self._show_status("Cancelling\u2026 (what was downloaded is kept)")

    def _on_progress(self, p: DownloadProgress) -> None:
        if self._busy != "download" or self._entry is None:
            return
        exact = p.overall_total is not None
        total = p.overall_total if p.overall_total is not None else max(self._entry.approx_bytes, p.overall_done)
        done = p.overall_done
        now = time.monotonic()
        self._rates.append((now, done))
        while len(self._rates) > 2 and now - self._rates[0][0] > 5.0:
            self._rates.popleft()
        t0, d0 = self._rates[0]
        rate = (done - d0) / (now - t0) if now - t0 > 0.2 else 0.0
        share = done / total if total else 0.0
        self.progress.setValue(int(1000 * min(share, 1.0 if exact else 0.99)))
        text = f"{human_bytes(done)} of {'' if exact else 'about '}{human_bytes(total)}"
        if rate > 0:
            text += f" \u00b7 {human_bytes(rate)}/s"
            if total > done:
                text += f" \u00b7 about {human_duration((total - done) / rate)} left"
        self._show_status(f"Downloading {self._entry.title}: {p.file}\n{text}")

    def _on_status(self, text: str) -> None:
        if self._busy == "download":
            self.cancel_button.setEnabled(False)  # checking the model: no longer cancellable
            self.progress.setValue(1000)
        self._show_status(text)

    def _on_download_finished(self, name: str, label: str, outcome: str, message: str) -> None:
        entry = self._entry
        self._set_busy("")
        self._thread = None
        if not outcome:
            self.installed = name
            self.progress.setValue(1000)
            self._show_status(f"{entry.title if entry else name} is installed and writes the answers from now on.")
            record_model_choice(self.qsettings, f"download:{name}")
            self._update_action()
            self.action_button.setFocus()
            self.sig_model_ready.emit(name)
            return
        if outcome == "cancelled":
            kept = partial_download(entry, self.download_dir) if entry else 0
            self._show_status(f"Download paused: {human_bytes(kept)} kept. Choose Resume download to continue "
                              "from there.")
        else:
            self.last_error = message
            self.progress.setVisible(False)
            self._show_status(message if outcome == "unreachable" else
                              f"The download failed: {message} Nothing was installed.", error=True)
        self._update_action()
        self.action_button.setFocus()

    # ---------------------------------------------------------------- a model server

    def open_server_dialog(self) -> QDialog:
        """The server dialog (window-modal); a server kept there writes the answers from now on."""
        from edgechat.ui.server_dialog import ServerDialog

        dialog = ServerDialog(self)
        dialog.accepted.connect(lambda: self._server_kept(dialog.saved_name, dialog.saved_label))
        self.server_dialog = dialog
        dialog.open()
        return dialog

    def _server_kept(self, name: str, label: str) -> None:
        if not name:
            return
        self.installed = name
        self._show_status(f"{label} writes the answers from now on.")
        record_model_choice(self.qsettings, f"server:{name}")
        self._update_action()
        self.action_button.setFocus()
        self.sig_model_ready.emit(name)

    # ---------------------------------------------------------------- importing

    def import_folder(self, folder: str) -> None:
        """Import a model folder off the window's thread (the settings dialog's import)."""
        if self._busy:
            return
        self.last_error = ""
        self.progress.setRange(0, 0)  # busy: the import names its steps
        self.progress.setVisible(True)
        self._show_status("Importing the model\u2026")
        self._set_busy("import")
        import_in_background(folder, self._import_signals)

    def _on_imported(self, name: str, label: str, error: str) -> None:
        self._set_busy("")
        self.progress.setRange(0, 1000)
        if error:
            self.progress.setVisible(False)
            self.last_error = error
            self._show_status(f"The model was not imported: {error}", error=True)
            return
        self.installed = name
        self.progress.setValue(1000)
        self._show_status(f"{label} is imported and writes the answers from now on.")
        record_model_choice(self.qsettings, f"import:{name}")
        self._update_action()
        self.action_button.setFocus()
        self.sig_model_ready.emit(name)

    # ---------------------------------------------------------------- closing

    def reject(self) -> None:
        """Not now / Escape / the window's close box: a running download is cancelled (its
        parts are kept); the dialog is not offered by itself again."""
        self.cancel_download()
        if not model_choice_made(self.qsettings):
            record_model_choice(self.qsettings, "later")
        super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.cancel_download()
        super().closeEvent(event)

    def shutdown(self, timeout: float = 5.0) -> None:
        """The window is closing: stop a download, wait a moment for its thread, and go too
        (a dialog is a window of its own: left open, it would keep the app running). Nothing is
        recorded: a choice not made is offered again on the next start."""
        self.cancel_download()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        self.hide()


def keep_place(widget: QWidget) -> None:
    policy = widget.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    widget.setSizePolicy(policy)


def _mnemonic(text: str, used: set[str]) -> str:
    """`text` with an & before its first letter or digit not already a mnemonic in `used`."""
    text = text.replace("&", "&&")
    for i, ch in enumerate(text):
        if ch.isalnum() and ch.lower() not in used:
            used.add(ch.lower())
            return text[:i] + "&" + text[i:]
    return text
