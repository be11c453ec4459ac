"""The main window: library | chat | sources, wired to the workers.

It composes the panes and routes signals between them; the work itself is in the panes, the
chat controller and the workers."""

from __future__ import annotations

import dataclasses
import html
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QModelIndex, QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListView,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from edgechat.core import paths
from edgechat.core.conversations import ConversationStore, export_markdown
from edgechat.core.engine import (
    READABLE,
    CatalogEntry,
    Identity,
    TeamAddress,
    installed_models,
    marker_spans,
    model_offers,
    model_privacy_note,
)
from edgechat.core.records import ClientKind, FileState, IndexPhase, Role
from edgechat.service.protocol import (
    AskRequest,
    CancelIndex,
    ClientInfo,
    EngineFailed,
    EngineReady,
    FailureKind,
    Idle,
    IndexJob,
    JobFailed,
    JobFinished,
    JobKind,
    JobStarted,
    LibraryListing,
    ModelsListed,
    ProbeModels,
    Progress,
    SetChunkSettings,
    SetModel,
)
from edgechat.ui.chat_controller import ChatController
from edgechat.ui.chat_pane import ChatPane
from edgechat.ui.first_run import ModelChoiceDialog, model_choice_made
from edgechat.ui.library_panel import LibraryPanel
from edgechat.ui.models import ConversationListModel, LibraryModel
from edgechat.ui.qtfix import guard as guard_refcounts
from edgechat.ui.settings import EXTRACTIVE, AppSettings, SettingsDialog, make_qsettings
from edgechat.ui.source_pane import SourcePane
from edgechat.ui.team_dialog import TeamAddDialog, TeamLibraryDialog
from edgechat.ui.watcher import LibraryWatcher
from edgechat.ui.workers import EngineProcess, LoadedSource, Workers

log = logging.getLogger(__name__)

TEAM_LIST_EVERY_MS = 30_000  # a team library's list follows the server's changes this often
ELSEWHERE = "(answers are written on another computer)"  # after a model server's name, when it is not here
NO_MODEL_NOTICE = (
    "<b>No language model installed:</b> answers quote the most relevant sentences of your documents "
    "(extractive mode). To have a local model write them, <a href=\"models\">choose a model</a> to "
    "download, or <a href=\"settings\">import a model folder in Settings</a> (an onnxruntime-genai folder; "
    "from the source, <code>scripts/setup.sh</code> builds the default model)."
)


def evidence_span(turn: Any, number: int, occurrence: int = 0) -> tuple[int, int] | None:
    """Where, inside source `number`'s passage, the sentence(s) are that support the sentence
    of the answer holding the `occurrence`-th [number] (else the first sentence citing it with
    evidence), or None when the check found none."""
    verdicts = list(getattr(turn, "sentence_verdicts", []))
    places = [s for s, _, numbers in marker_spans(turn.answer) if number in numbers]
    if 0 <= occurrence < len(places):
        verdicts.sort(key=lambda v: not (v.start <= places[occurrence] < v.end))  # that sentence first
    for v in verdicts:
        spans = [(e.start, e.end) for e in v.evidence if e.number == number and e.end > e.start]
        if spans:
            return min(a for a, _ in spans), max(b for _, b in spans)
    return None


def narrowed(source: dict, span: tuple[int, int] | None) -> dict:
    """The source with the part of its passage to highlight: `span`, in characters of the
    passage (the engine cuts the passage's text to it)."""
    return source if span is None else {**source, "focus": list(span)}


class ChatList(QWidget):
    """Past chats of this library: New chat, open on click, Delete and Export."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ConversationListModel(self)
        self.view = QListView(self)
        self.view.setModel(self.model)
        self.view.setAccessibleName("Past chats")
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.new_button = QPushButton("New chat", self)
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.delete_button = QPushButton("Delete", self)
        self.export_button = QPushButton("Export…", self)
        self.export_button.setToolTip("Save the open conversation as Markdown with its sources (Ctrl+E)")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.new_button)
        row.addWidget(self.export_button)
        row.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.view, 1)


def library_folder(library: Path | str) -> Path:
    """Where a library keeps this desktop's files (its chats): the folder itself, or for a team
    library (chroma://HOST:PORT/NAME) this desktop's cache of it, for the OS account."""
    team = TeamAddress.parse(library)
    return team.cache_dir(Identity.from_os()) if team is not None else Path(library)


class MainWindow(QMainWindow):
    sig_engine_ready = Signal()
    # Library › Open a team library… / Open my own library: the library to open in this window's
    # place (a chroma:// address as a str, or a folder as a Path); edgechat.ui.app opens it.
    sig_open_library = Signal(object)

    def __init__(
        self,
        library: Path | str | None = None,
        *,
        engine_factory: Callable | None = None,
        client_factory: Callable | None = None,
        qsettings: QSettings | None = None,
        start: bool = True,
        in_process: bool = False,
        model_catalog: list[CatalogEntry] | None = None,
        download_dir: str | Path | None = None,
    ) -> None:
        """Without factories (the app) the core runs in an engine process; with factories
        (tests) or `in_process`, on threads of this process. `model_catalog` is what the model
        choice offers (default: the catalog; tests serve their own), `download_dir` where its
        downloads are kept until installed (default: the cache)."""
        guard_refcounts()
        super().__init__()
        # A team library (chroma://HOST:PORT/NAME) is an address, never a path.
        self.team = TeamAddress.parse(library) if library else None
        self.library: Path | str = (str(self.team) if self.team is not None
                                    else Path(library) if library else paths.default_library_dir())
        self.setWindowTitle(self._title())
        self.setObjectName("EdgeChatMainWindow")
        self.setAcceptDrops(True)
        self.qsettings = qsettings or make_qsettings()
        self.settings = AppSettings.load(self.qsettings)
        self.engine_ready = False
        self.models: list[tuple[str, str]] = []
        self.active_model = ""
        self.client_info: ClientInfo | None = None
        self.model_offers = model_offers(model_catalog)
        self.download_dir = download_dir
        self.model_dialog: ModelChoiceDialog | None = None
        self._choice_offered = False  # the first-run model choice was shown since the app started
        self._evidence: tuple[int, tuple[int, int] | None] | None = None  # while a chip is followed
        self._index_titles = {JobKind.INDEX: "Indexing", JobKind.REFRESH: "Checking the library for changes",
                              JobKind.REMOVE: "Removing"}

        self._restarts = 0
        chunks, model = self.settings.chunk_settings(), self.settings.model
        if engine_factory is None and client_factory is None and not in_process:
            self.workers: Workers | EngineProcess = EngineProcess(str(self.library), chunk_settings=chunks,
                                                                  model=model, parent=self)
        else:
            from edgechat.service.host import default_engine_factory

            self.workers = Workers(engine_factory or default_engine_factory(self.library), client_factory,
                                   chunk_settings=chunks, model=model, parent=self)

        # ---- panes
        self.library_panel = LibraryPanel(self)
        self.chat_list = ChatList(self)
        self.side = QTabWidget(self)
        self.side.setAccessibleName("Library and chats")
        self.side.tabBar().setAccessibleName("Library and chats")
        self.side.addTab(self.library_panel, "Library")
        self.side.addTab(self.chat_list, "Chats")
        self.chat = ChatPane(self)
        self.chat.notice.linkActivated.connect(self._notice_link)
        self.sources = SourcePane(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.side)
        self.splitter.addWidget(self.chat)
        self.splitter.addWidget(self.sources)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.splitter)
        self.model_label = QLabel("")
        self.library_label = QLabel("")
        self.statusBar().addPermanentWidget(self.library_label)
        self.statusBar().addPermanentWidget(self.model_label)

        self._library_roots: list[str] = []  # every folder shown (a team library: others' too)
        self._own_roots: list[str] = []  # the folders this desktop indexes, watches and re-scans
        self._open_document: str | None = None  # the document last shown in the source pane
        self.conversations = ConversationStore(paths.conversations_dir(library_folder(self.library)))
        self.controller = ChatController(self.workers, self.chat, self.conversations, self._ask_request, self)
        self.watcher = LibraryWatcher(parent=self)
        # A team library's documents change on the server: its list is asked for again now and then.
        self.team_timer = QTimer(self)
        self.team_timer.setInterval(TEAM_LIST_EVERY_MS)
        self.team_timer.timeout.connect(self.list_team_library)

        self._build_actions()
        self._connect()
        self._restore_layout()
        self._refresh_chat_list()
        self.chat.set_status("Opening the library…")
        if start:
            self.workers.start()

    # ================================================================ construction

    def _build_actions(self) -> None:
        def action(text: str, slot, shortcut=None, tip: str = "") -> QAction:
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setStatusTip(tip)
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.act_add = action("&Add folder…", self.choose_folder, QKeySequence.StandardKey.Open,
                              "Add a folder to the library")
        self.act_add_files = action("Add &files…", self.choose_files, "Ctrl+Shift+O", "Add single files")
        self.act_export = action("&Export chat as Markdown…", self.choose_export, "Ctrl+E")
        self.act_settings = action("&Settings…", self.open_settings, QKeySequence.StandardKey.Preferences)
        self.act_choose_model = action("Choose a &model…", self.choose_model, None,
                                       "Download a language model, import a model folder, or answer without one")
        self.act_quit = action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.act_new_chat = action("&New chat", self.controller.new_chat, QKeySequence.StandardKey.New)
        self.act_focus = action("&Focus the question box", self.focus_input, "Ctrl+L")
        self.act_copy_answer = action("&Copy the last answer", self.copy_last_answer, "Ctrl+Shift+C",
                                      "Copy the last answer as Markdown, with its sources")
        self.act_regenerate = action("&Regenerate the last answer", self.controller.regenerate, "Ctrl+R",
                                     "Ask the last question again")
        self.act_show_where = action("Show me &where it comes from", self.show_next_where, "F8",
                                     "Step through the last answer's sentences and show each one's source")
        self.act_stop = action("&Stop answering", self.controller.stop, "Esc")
        self.act_stop.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.act_rescan = action("&Check for changes", self.rescan, "F5",
                                 "Look for new, changed and removed files in the library's folders")
        self.act_rebuild = action("&Rebuild index", self.rebuild, None,
                                  "Index every file again (after changing the passage size)")
        self.act_cancel = action("&Cancel indexing", self.cancel_indexing, None)
        self.act_remove = action("&Remove selected folder", self._remove_selected, None)
        self.act_open_team = action("Open a &team library…", self.open_team_library, None,
                                    "Open a library on a Chroma server (chroma://HOST:PORT/NAME) in this window")
        self.act_open_own = action("Open &my own library", self.open_own_library, None,
                                   "Go back to the library on this computer")
        self.act_open_own.setEnabled(self.team is not None or self.library != paths.default_library_dir())
        self.act_logs = action("Open the &log folder", self.open_log_folder, None)
        self.act_about = action("&About EdgeChat", self.about, None)

        mb = self.menuBar()
        m = mb.addMenu("&File")
        for a in (self.act_add, self.act_add_files, self.act_export):
            m.addAction(a)
        m.addSeparator()
        m.addAction(self.act_choose_model)
        m.addAction(self.act_settings)
        m.addSeparator()
        m.addAction(self.act_quit)
        m = mb.addMenu("&Chat")
        for a in (self.act_new_chat, self.act_focus, self.act_copy_answer, self.act_regenerate,
                  self.act_show_where, self.act_stop):
            m.addAction(a)
        m = mb.addMenu("&Library")
        self.library_menu = m
        for a in (self.act_rescan, self.act_cancel, self.act_remove, self.act_rebuild):
            m.addAction(a)
        m.addSeparator()
        m.addAction(self.act_open_team)
        m.addAction(self.act_open_own)
        m = mb.addMenu("&Help")
        m.addAction(self.act_logs)
        m.addAction(self.act_about)

    def copy_last_answer(self) -> str:
        """Copy the chat's last answer (Chat › Copy the last answer); returns what was copied."""
        transcript = self.chat.transcript
        return transcript.copy_answer(len(transcript._turns) - 1)

    def _connect(self) -> None:
        w = self.workers
        w.index.sig_status.connect(lambda ev: self.statusBar().showMessage(ev.text, 15000))
        w.index.sig_engine_ready.connect(self._engine_ready)
        w.index.sig_engine_failed.connect(self._engine_failed)
        w.index.sig_job_started.connect(self._job_started)
        w.index.sig_progress.connect(self._progress)
        w.index.sig_job_finished.connect(self._job_finished)
        w.index.sig_job_failed.connect(self._job_failed)
        w.index.sig_files.connect(self._files)
        w.index.sig_watch.connect(lambda ev: self.watcher.set_paths(list(ev.dirs), list(ev.files)))
        w.index.sig_idle.connect(self._index_idle)
        w.answer.sig_client.connect(self._client_changed)
        w.answer.sig_models.connect(self._models_listed)
        w.docs.sig_loaded.connect(self._document_loaded)
        self.watcher.sig_changed.connect(self._watched_change)

        self.library_panel.sig_add_folder.connect(self.choose_folder)
        self.library_panel.sig_remove.connect(self.remove_roots)
        self.library_panel.sig_cancel.connect(self.cancel_indexing)
        self.library_panel.sig_file_activated.connect(self._file_activated)
        self.chat.drop_hint.sig_add_folder.connect(self.choose_folder)
        self.controller.sig_conversations_changed.connect(self._mark_current_chat)
        self.controller.io.sig_listed.connect(self._chats_listed)
        self.controller.sig_turn_sources.connect(self._turn_sources)
        self.controller.sig_chip.connect(self.follow_citation)
        self.chat.transcript.sig_show_where.connect(self.show_where)
        self.controller.sig_answering.connect(self._answering_changed)
        self.sources.sig_show_source.connect(self.show_source)
        self.chat_list.view.clicked.connect(self._chat_clicked)
        self.chat_list.view.activated.connect(self._chat_clicked)
        self.chat_list.new_button.clicked.connect(self.controller.new_chat)
        self.chat_list.delete_button.clicked.connect(self._delete_selected_chat)
        self.chat_list.export_button.clicked.connect(self.choose_export)

    def _restore_layout(self) -> None:
        qs = self.qsettings
        geometry = qs.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        for key, splitter, default in (("window/mainSplitter", self.splitter, [300, 540, 440]),
                                       ("window/sourceSplitter", self.sources.splitter, [260, 420])):
            state = qs.value(key)
            if not (isinstance(state, QByteArray) and not state.isEmpty() and splitter.restoreState(state)):
                splitter.setSizes(default)

    def save_layout(self) -> None:
        qs = self.qsettings
        qs.setValue("window/geometry", self.saveGeometry())
        qs.setValue("window/mainSplitter", self.splitter.saveState())
        qs.setValue("window/sourceSplitter", self.sources.splitter.saveState())
        qs.sync()

    # ================================================================ which library

    def _title(self) -> str:
        if self.team is not None:
            return f"EdgeChat — {self.team.name} on {self.team.host} (team library)"
        assert isinstance(self.library, Path)
        return "EdgeChat" if self.library == paths.default_library_dir() else f"EdgeChat — {self.library.name}"

    def team_note(self) -> str:
        """A team library: where questions and passages go ("" for a library of this computer)."""
        if self.team is None:
            return ""
        return (f"Team library {self.team.name} on the Chroma server at {self.team.server} ({self.team}): "
                "questions, and the passages they find, go to that server; answers are checked on this computer.")

    def open_team_library(self) -> TeamLibraryDialog:
        """Library › Open a team library…: the address, checked; this window's library is replaced
        by it when its server answers (sig_open_library)."""
        dialog = TeamLibraryDialog(self, qsettings=self.qsettings)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if self.team is not None:
            dialog.edit.setText(str(self.team))
        dialog.accepted.connect(lambda: dialog.address is not None and self.open_library(str(dialog.address)))
        dialog.open()
        self.team_dialog = dialog
        return dialog

    def open_own_library(self) -> None:
        """Library › Open my own library: back to the library of this computer."""
        self.open_library(paths.default_library_dir())

    def open_library(self, library: Path | str) -> None:
        """Ask for `library` in this window's place (edgechat.ui.app opens a window on it, and
        this one closes); the library already open is only said to be open."""
        from edgechat.ui.single_instance import library_key

        if library_key(library) == library_key(self.library):
            self.statusBar().showMessage(f"{library} is the library open in this window.", 8000)
            return
        self.statusBar().showMessage(f"Opening {library}…", 8000)
        self.sig_open_library.emit(library)

    def list_team_library(self) -> None:
        """A team library: list it again, with what other desktops indexed since."""
        if self.engine_ready and not self.workers.busy and self.workers.pending() == 0:
            self.workers.submit(IndexJob(JobKind.LIST))

    # ================================================================ library

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to the library", str(Path.home()))
        if folder:
            self.add_paths([folder])

    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(
            self, "Add files to the library", str(Path.home()),
            "Documents (" + " ".join(f"*{s}" for _, suffixes in READABLE for s in suffixes) + ");;All files (*)")
        if files:
            self.add_paths(files)

    def add_paths(self, items: list[str], confirm: bool = True, readers: str | None = None) -> list[str]:
        """Add folders or files to the library and index them in the background. Into a team
        library, after the user agrees that their passages go to its server and says who may
        read them (`readers`, without `confirm`: None keeps what was set)."""
        found = []
        for p in items:
            path = Path(p).expanduser()
            if path.exists():
                found.append(str(path.resolve()))
        missing = len(items) - len(found)
        if missing:
            self.statusBar().showMessage(f"{missing} dropped item(s) do not exist and were skipped.", 8000)
        if not found:
            return []
        if self.team is not None and confirm:
            dialog = TeamAddDialog(self.team, found, self)
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return []
            readers = dialog.readers()
        self.library_panel.progress.start(self._index_titles[JobKind.INDEX])
        self.workers.submit(IndexJob(JobKind.INDEX, found, readers=readers if self.team is not None else None))
        self.side.setCurrentWidget(self.library_panel)
        return found

    def remove_roots(self, roots: list[str], confirm: bool = True) -> None:
        elsewhere = [r for r in roots if r not in self._own_roots and r in self._library_roots]
        if elsewhere:  # a team library's folder indexed by another desktop: removed there
            self.statusBar().showMessage(f"{elsewhere[0]} is indexed on another computer of the team: it is "
                                         "removed from the team library there.", 10000)
            roots = [r for r in roots if r not in elsewhere]
        if not roots:
            return
        if confirm:
            names = "\n".join(roots)
            answer = QMessageBox.question(
                self, "Remove from the library",
                f"Take these folders out of the library?\n\n{names}\n\nTheir files stay on disk; their "
                "passages are removed from the index.")
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.workers.submit(IndexJob(JobKind.REMOVE, list(roots)))

    def _remove_selected(self) -> None:
        self.remove_roots(self.library_panel.selected_roots())

    def rescan(self) -> None:
        if self.engine_ready:
            self.workers.submit(IndexJob(JobKind.REFRESH))

    def rebuild(self) -> None:
        roots = [r for r in self.library_panel.model.roots() if r in self._own_roots]
        if not roots or not self.engine_ready:
            return
        answer = QMessageBox.question(self, "Rebuild the index",
                                      "Index every file of the library again? This takes as long as the "
                                      "first indexing did; you can keep asking questions meanwhile.")
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.workers.submit(IndexJob(JobKind.REMOVE, roots))
        self.workers.submit(IndexJob(JobKind.INDEX, roots))

    def cancel_indexing(self) -> None:
        self.workers.send(CancelIndex())
        self.library_panel.progress.cancel_button.setEnabled(False)
        self.library_panel.progress.detail.setText("Cancelling after the current batch…")

    def _file_activated(self, path: str) -> None:
        """Enter or double-click on a file: a password-protected PDF asks for its password and
        is indexed again with it; any other file opens in the system's viewer."""
        index = self.library_panel.model.find_file(path)
        problem = index.data(LibraryModel.ProblemRole) if index.isValid() else ""
        if problem == "password required":
            from PySide6.QtWidgets import QInputDialog, QLineEdit

            password, ok = QInputDialog.getText(
                self, "Password required", f"{os.path.basename(path)} is protected by a password.\n"
                "Enter it to index the file (it is used once, not stored):", QLineEdit.EchoMode.Password)
            if ok and password:
                self.index_with_password(path, password)
            return
        QDesktopServices.openUrl(QUrl.fromLocalFile(path))

    def index_with_password(self, path: str, password: str) -> None:
        root = next((r for r in self.library_panel.model.roots()
                     if path == r or path.startswith(r.rstrip(os.sep) + os.sep)), path)
        self.library_panel.progress.start(self._index_titles[JobKind.INDEX])
        self.workers.submit(IndexJob(JobKind.INDEX, [root], passwords={path: password}))

    def _watched_change(self, roots: list[str]) -> None:
        if self.engine_ready:
            self.workers.submit(IndexJob(JobKind.INDEX, roots))

    # ---------------------------------------------------------------- index worker signals

    def _engine_ready(self, _event: EngineReady) -> None:
        self.engine_ready = True
        self.chat.set_status("")
        self.controller.set_ready()
        self.workers.send(ProbeModels())
        # Pick up whatever changed while EdgeChat was closed (a team library: in the folders this
        # desktop indexes; the others' changes come with each listing).
        self.workers.submit(IndexJob(JobKind.REFRESH))
        if self.team is not None:
            self.team_timer.start()
        self.sig_engine_ready.emit()

    def _engine_failed(self, event: EngineFailed) -> None:
        kind, message = event.kind, event.message
        self.chat.set_status("")
        if kind == FailureKind.DIED:
            self.engine_ready = False
            self.controller.engine_lost(message)
            if self._restarts < 3 and isinstance(self.workers, EngineProcess):
                self._restarts += 1
                self.statusBar().showMessage(f"{message} Restarting it…", 15000)
                self.chat.set_status("Reopening the library…")
                self.workers.restart()
                return
        if kind == FailureKind.LOCKED:
            text = (f"{message}\n\nOnly one EdgeChat may use a library at a time. Close the other one, or open "
                    "a different library with --library.")
            title = "The library is in use"
        else:
            what = f"The team library {self.team}" if self.team is not None else f"The library at {self.library}"
            text = f"{what} could not be opened:\n\n{message}"
            title = "The library could not be opened"
        self.controller.block(" ".join(text.split("\n\n")[:2]))  # what went wrong and why, on one line
        self.chat.set_notice(f"<b>{title}.</b> {message}")
        self.chat.input.setEnabled(False)
        self.chat.send_button.setEnabled(False)
        self.show_error(title, text)

    def show_error(self, title: str, text: str) -> None:
        """A non-blocking message box (tests and the event loop keep running)."""
        box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_error = (title, text)

    def _job_started(self, event: JobStarted) -> None:
        kind, job_paths = event.kind, event.paths
        box = self.library_panel.progress
        if kind == JobKind.INDEX:
            names = ", ".join(os.path.basename(p.rstrip(os.sep)) or p for p in job_paths[:3])
            box.start(f"Indexing {names}" + ("…" if len(job_paths) > 3 else ""))
            self.library_panel.model.set_busy_roots([p for p in job_paths if os.path.isdir(p)])
        elif kind == JobKind.REMOVE:
            box.start("Removing from the library")
        else:
            box.start(self._index_titles[JobKind.REFRESH])
            box.hide()  # shown only if something needs indexing

    def _progress(self, p: Progress) -> None:
        box = self.library_panel.progress
        if p.phase == IndexPhase.INDEXING and p.files_total:
            box.show()
        if box.isVisible():
            box.update_progress(p)

    def _job_finished(self, event: JobFinished) -> None:
        kind, summary = event.kind, event.summary
        self._restarts = 0  # the engine works again: a later crash gets its own restarts
        self.library_panel.model.set_busy_roots([])
        if kind == JobKind.REMOVE:
            n = summary.removed
            self.statusBar().showMessage(f"Removed {n} file{'s' if n != 1 else ''} from the library.", 10000)
            return
        indexed, failed = summary.indexed, summary.failed
        if kind == JobKind.REFRESH and not indexed and not failed and not summary.removed:
            return
        parts = [f"Indexed {indexed} file{'s' if indexed != 1 else ''} ({summary.chunks_added} passages) "
                 f"in {summary.seconds:.1f} s"]
        if summary.removed:
            parts.append(f"{summary.removed} removed")
        if failed:
            parts.append(f"{failed} could not be indexed (see the library)")
        if summary.cancelled:
            parts.append("cancelled: the rest is indexed next time")
        self.statusBar().showMessage("; ".join(parts) + ".", 15000)
        self.last_summary = summary

    def _job_failed(self, event: JobFailed) -> None:
        message = event.message
        self.library_panel.model.set_busy_roots([])
        self.statusBar().showMessage(f"Indexing failed: {message}", 20000)
        self.show_error("Indexing failed", f"{message}\n\nDetails are in the log: {paths.log_dir()}")

    def _index_idle(self, _event: Idle) -> None:
        if self.workers.pending() == 0:
            self.library_panel.progress.finish()

    def _files(self, listing: LibraryListing) -> None:
        own, files = list(listing.roots), list(listing.files)
        roots = sorted(set(own) | set(listing.shared))  # a team library: the others' folders too
        self.library_panel.set_library(roots, files, listing.offline)
        self.watcher.set_roots(own)  # only this desktop's folders are watched (and re-scanned)
        done = sum(1 for f in files if f.state in (FileState.DONE, FileState.STALE))
        self.controller.set_has_documents(done > 0 or bool(roots))
        documents = f"{done} document{'s' if done != 1 else ''}"
        if self.team is not None:
            self.library_label.setText(f"{documents} in team library {self.team.name} on {self.team.server}")
            self.library_label.setToolTip(self.team_note())
        else:
            self.library_label.setText(documents)
        self._library_roots, self._own_roots = roots, own
        self.chat.set_scope_choices(roots, self._open_document)

    # ================================================================ answers and sources

    def _ask_request(self, question: str, history: tuple[tuple[Role, str], ...]) -> AskRequest:
        s = self.settings
        return AskRequest(question, max_results=s.sources, history=history, temperature=s.temperature,
                          max_new_tokens=s.max_new_tokens, scope=self.chat.scope())

    def focus_input(self) -> None:
        self.chat.input.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _answering_changed(self, answering: bool) -> None:
        self.act_stop.setEnabled(True)

    def _client_changed(self, info: ClientInfo) -> None:
        self.client_info = info
        if info.kind == ClientKind.EXTRACTIVE:
            self.model_label.setText("Answers: extractive (no model)")
            note = info.note
            if note.startswith("No language model"):
                self.chat.set_notice(NO_MODEL_NOTICE)
            elif note:
                self.chat.set_notice(f"<b>Extractive answers.</b> {html.escape(note)}")
        else:
            self.model_label.setText(f"Model: {info.name}" + (f" {ELSEWHERE}" if info.note else ""))
            self.model_label.setToolTip(info.note)
            # A model server off this computer: where answers are written, and what is sent there.
            self.chat.set_notice(f"<b>Model server.</b> {html.escape(info.note)}" if info.note else "")

    def _models_listed(self, event: ModelsListed) -> None:
        models, active = [(m.name, m.label) for m in event.models], event.active
        self.models = models
        self.active_model = active
        if self.settings.model == EXTRACTIVE:
            self.model_label.setText("Answers: extractive (no model)")
        elif not models:
            self.model_label.setText("Answers: extractive (no model)")
            self.chat.set_notice(NO_MODEL_NOTICE)
            self._offer_model_choice()
        else:
            name = self.settings.model or active or models[0][0]
            note = model_privacy_note(name)
            self.model_label.setText(f"Model: {name}" + (f" {ELSEWHERE}" if note else ""))
            self.model_label.setToolTip(note)
            if self.chat.notice.text() == NO_MODEL_NOTICE:
                self.chat.set_notice("")

    # ---------------------------------------------------------------- choosing a model

    def _offer_model_choice(self) -> None:
        """No language model: offer the choice once, unless the user answered it before."""
        if self._choice_offered or model_choice_made(self.qsettings):
            return
        self._choice_offered = True
        log.info("no language model is installed: offering the model choice")
        QTimer.singleShot(0, self.choose_model)

    def choose_model(self) -> ModelChoiceDialog:
        """Open the model choice (window-modal, without blocking the event loop); a download
        that is running keeps its dialog, which is shown again."""
        dialog = self.model_dialog
        if dialog is None or not (dialog.busy or dialog.isVisible()):
            if dialog is not None:
                dialog.deleteLater()
            dialog = ModelChoiceDialog(self.model_offers, self.qsettings, self, download_dir=self.download_dir,
                                       first_run=not self.models)
            dialog.sig_model_ready.connect(self._model_installed)
            dialog.sig_extractive.connect(self._extractive_chosen)
            self.model_dialog = dialog
        if dialog.isVisible():
            dialog.activateWindow()
        else:
            dialog.open()
        return dialog

    def _notice_link(self, href: str) -> None:
        if href == "models":
            self.choose_model()
        else:
            self.open_settings()

    def _model_installed(self, name: str) -> None:
        """A model was downloaded or imported from the model choice: it answers from now on."""
        self.apply_settings(dataclasses.replace(self.settings, model=name))
        self.workers.send(ProbeModels())
        self.statusBar().showMessage(f"Answers are written by {name} from now on.", 15000)

    def _extractive_chosen(self) -> None:
        self.apply_settings(dataclasses.replace(self.settings, model=EXTRACTIVE))
        self.model_label.setText("Answers: extractive (no model)")
        self.chat.set_notice("")

    def _turn_sources(self, turn: int, sources: list, cited: list) -> None:
        self.sources.set_sources(turn, sources, cited)

    def follow_citation(self, turn: int, number: int) -> None:
        """Chip `number` of answer `turn` was clicked: select that source and show the passage."""
        turns = self.controller.turns
        if not 0 <= turn < len(turns):
            return
        if self.sources.turn_index != turn:
            self.sources.set_sources(turn, turns[turn].sources, turns[turn].cited_numbers)
        self.chat.transcript.highlight(turn, number)
        self._evidence = (number, evidence_span(turns[turn], number, self.chat.transcript.followed_occurrence))
        try:
            self.sources.select_number(number)
        finally:
            self._evidence = None

    def show_next_where(self) -> None:
        """Chat › Show me where it comes from: the last answer's next sentence with a source,
        highlighted, and its evidence opened."""
        if not self.chat.transcript.show_next_where(len(self.controller.turns) - 1):
            self.statusBar().showMessage("The last answer has no sentence found in your documents.", 5000)

    def show_where(self, turn: int, k: int) -> None:
        """Open the source of sentence `k` of answer `turn` at the sentence(s) that support it."""
        turns = self.controller.turns
        verdicts = turns[turn].sentence_verdicts if 0 <= turn < len(turns) else []
        if not 0 <= k < len(verdicts):
            return
        verdict = verdicts[k]
        number = verdict.sources[0] if verdict.sources else verdict.evidence[0].number
        spans = [(e.start, e.end) for e in verdict.evidence if e.number == number and e.end > e.start]
        if self.sources.turn_index != turn:
            self.sources.set_sources(turn, turns[turn].sources, turns[turn].cited_numbers)
        self._evidence = (number, (min(a for a, _ in spans), max(b for _, b in spans)) if spans else None)
        try:
            self.sources.select_number(number)
        finally:
            self._evidence = None

    def show_source(self, source: dict) -> None:
        """Open a source (a saved chat's or an answer's, as a dict) in the viewer. Followed
        from a chip, the passage shown is the source sentence(s) that support the answer's
        sentence, when the check found them; else the whole passage."""
        if self._evidence is not None and int(source.get("ordinal") or 0) == self._evidence[0]:
            source = narrowed(source, self._evidence[1])
        self.sources.viewer.show_loading(source)
        self.workers.docs.show(source)

    def _document_loaded(self, loaded: LoadedSource) -> None:
        self.sources.viewer.show_result(loaded)
        path = str(loaded.source.get("path") or "")
        if path and path != self._open_document:  # the open document becomes a choice of scope
            self._open_document = path
            self.chat.set_scope_choices(self._library_roots, path)

    # ================================================================ chats

    def _refresh_chat_list(self) -> None:
        self.controller.io.refresh()

    def _chats_listed(self, items: list) -> None:
        self.chat_list.model.set_items(items)
        self.chat_list.model.set_current(self.controller.conversation.id)

    def _mark_current_chat(self) -> None:
        self.chat_list.model.set_current(self.controller.conversation.id)

    def _chat_clicked(self, index: QModelIndex) -> None:
        cid = index.data(ConversationListModel.IdRole)
        if cid:
            self.controller.open_chat(cid)

    def _delete_selected_chat(self) -> None:
        idx = self.chat_list.view.currentIndex()
        cid = idx.data(ConversationListModel.IdRole) if idx.isValid() else self.controller.conversation.id
        if cid:
            self.controller.delete_chat(cid)

    def choose_export(self) -> None:
        conv = self.controller.conversation
        if not conv.turns:
            self.statusBar().showMessage("Nothing to export: this chat is empty.", 5000)
            return
        name = "".join(c if c.isalnum() or c in " -_" else "_" for c in conv.display_title).strip() or "chat"
        target, _ = QFileDialog.getSaveFileName(self, "Export the chat", str(Path.home() / f"{name}.md"),
                                                "Markdown (*.md)")
        if target:
            self.export_chat(Path(target))

    def export_chat(self, target: Path) -> Path:
        target.write_text(export_markdown(self.controller.conversation), encoding="utf-8")
        self.statusBar().showMessage(f"Exported to {target}", 8000)
        return target

    # ================================================================ settings, help

    def open_settings(self) -> None:
        models, active = installed_models()
        dialog = SettingsDialog(self.settings, models, active, self)
        if dialog.exec() == SettingsDialog.DialogCode.Accepted:
            self.apply_settings(dialog.result_settings())

    def apply_settings(self, new: AppSettings) -> None:
        old = self.settings
        self.settings = new
        new.save(self.qsettings)
        if new.model != old.model:
            self.workers.send(SetModel(new.model))
            self.workers.send(ProbeModels())
        if new.chunk_settings() != old.chunk_settings():
            self.workers.send(SetChunkSettings(new.chunk_settings()))

    def open_log_folder(self) -> None:
        folder = paths.log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def about(self) -> None:
        from edgechat import __version__

        where = f"<p>{html.escape(self.team_note())}</p>" if self.team is not None else ""
        QMessageBox.about(self, "About EdgeChat",
                          f"<b>EdgeChat {__version__}</b><p>Chat with your own documents, privately: indexing, "
                          f"search and answers all run on this computer.</p>{where}<p>Library: "
                          f"{html.escape(str(self.library))}<br/>Logs: {paths.log_dir()}</p>")

    def bring_forward(self) -> None:
        """Another launch for this library asked us to come to the front."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    # ================================================================ drag and drop

    @staticmethod
    def _local_paths(event: QDragEnterEvent | QDropEvent) -> list[str]:
        md = event.mimeData()
        if not md.hasUrls():
            return []
        return [u.toLocalFile() for u in md.urls() if u.isLocalFile() and u.toLocalFile()]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._local_paths(event):
            event.acceptProposedAction()
            self.chat.drop_hint.active = True
            self.chat.drop_hint.update()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if self._local_paths(event):
            event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:
        self.chat.drop_hint.active = False
        self.chat.drop_hint.update()

    def dropEvent(self, event: QDropEvent) -> None:
        self.chat.drop_hint.active = False
        self.chat.drop_hint.update()
        found = self._local_paths(event)
        if not found:
            event.ignore()
            return
        event.acceptProposedAction()
        self.add_paths(found)

    # ================================================================ closing

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        if self.model_dialog is not None:
            self.model_dialog.shutdown()  # a download stops; what it fetched is kept
        self.controller.stop()
        self.controller.io.close()  # the last chat is on disk before the window goes
        self.watcher.enabled = False
        self.watcher.clear()
        self.team_timer.stop()
        self.hide()
        self.workers.close()
        event.accept()
