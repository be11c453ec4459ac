"""Starting the desktop app: `run_app(library)`, on a folder or a team library's address
(chroma://HOST:PORT/NAME). `Launcher` keeps the window of the library open now: Library › Open a
team library… and Open my own library open a window on the other library in its place.

Kept light on purpose: only Qt and the window's own modules are imported before the window
shows; the core's heavy parts (Chroma, onnxruntime, the models) load in worker threads after."""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edgechat.ui.mainwindow import MainWindow

log = logging.getLogger(__name__)

# The GIL is handed between threads every `switchinterval` seconds: a short slice brings the
# GUI thread back quickly from the indexing and answering threads.
SWITCH_INTERVAL = 0.002


def make_application(argv: list[str] | None = None):
    """The QApplication, logging, the exception hook and the runtime settings of the app."""
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    import edgechat.core  # noqa: F401  (telemetry off before anything imports onnxruntime)
    from edgechat.ui.crash import ExceptionHook, setup_logging
    from edgechat.ui.qtfix import guard
    from edgechat.ui.resources import app_icon

    guard()

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("EdgeChat")
    app.setOrganizationName("EdgeChat")
    app.setApplicationDisplayName("EdgeChat")
    QGuiApplication.setDesktopFileName("edgechat")
    app.setWindowIcon(app_icon())
    setup_logging()
    ExceptionHook().install()
    sys.setswitchinterval(SWITCH_INTERVAL)
    return app


def settle() -> None:
    """Once the window is up: move everything allocated so far (Qt wrappers, modules) out of
    the garbage collector's way, so its full collections stay short while the app runs."""
    import gc

    gc.collect()
    gc.freeze()


def resolve_library(library: Path | str | None) -> Path | str:
    """The library to open: a team library as its address (given, or in $EDGECHAT_LIBRARY),
    spelt as TeamAddress spells it and never made a path; else a folder. Raises ValueError for a
    malformed chroma:// address."""
    import os

    from edgechat.core import paths

    given = str(library or os.environ.get("EDGECHAT_LIBRARY") or "").strip()
    if given.startswith("chroma:"):
        from edgechat.core.engine import TeamAddress

        return str(TeamAddress.parse(given))
    return Path(library).expanduser() if library else paths.default_library_dir()


class Launcher:
    """The window of the library open now and the single-instance server named after that
    library. A window's sig_open_library (Library › Open a team library…, Open my own library)
    opens a window on the other library where it was, then closes the old one (its engine and
    its library with it): everything a window holds of a library (the engine, its chats, the
    folders it watches) is built for that library, so a new window is the clean way to switch.
    A library already open in another EdgeChat is brought forward there instead."""

    def __init__(self, make_window: Callable[[Path | str], "MainWindow"] | None = None) -> None:
        self._make = make_window
        self.window: MainWindow | None = None
        self.server = None

    def open(self, library: Path | str) -> "MainWindow | None":
        """A window on `library` in place of the current one; None when another EdgeChat has
        the library open (it was asked to come forward) and nothing changed here."""
        from edgechat.ui.single_instance import InstanceServer, notify_running

        if notify_running(library):
            if self.window is not None:
                self.window.statusBar().showMessage(
                    f"{library} is open in another EdgeChat window; it was brought to the front.", 10000)
            return None
        server = InstanceServer(library)
        old, old_server = self.window, self.server
        if old is not None:
            old.save_layout()  # the new window takes the old one's place and size
        if self._make is None:
            from edgechat.ui.mainwindow import MainWindow

            self._make = MainWindow
        window = self._make(library)
        if old_server is not None:
            old_server.close()
        server.listen()
        server.sig_activate.connect(window.bring_forward)
        window.sig_open_library.connect(self.open)
        self.window, self.server = window, server
        window.show()
        if old is not None:
            log.info("switching the window from %s to %s", old.library, library)
            old.close()
            old.deleteLater()
        return window

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def run_app(library: Path | str | None = None, argv: list[str] | None = None) -> int:
    t0 = time.perf_counter()
    try:
        library = resolve_library(library)
    except ValueError as e:  # a malformed chroma:// address
        print(f"edgechat: {e}", file=sys.stderr)
        return 2
    app = make_application(argv)

    from PySide6.QtCore import QTimer

    launcher = Launcher()
    window = launcher.open(library)
    if window is None:
        print(f"EdgeChat is already open for {library}; it was brought to the front.", file=sys.stderr)
        return 0
    log.info("window shown %.3f s after run_app (library %s)", time.perf_counter() - t0, library)
    QTimer.singleShot(0, settle)

    # Ctrl+C or a polite kill closes the window properly (threads joined, library released).
    def close_on_signal(*_args) -> None:
        if launcher.window is not None:
            QTimer.singleShot(0, launcher.window.close)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, close_on_signal)
        except (ValueError, OSError):  # not the main thread, or not supported here
            pass
    tick = QTimer()
    tick.timeout.connect(lambda: None)  # lets Python run its signal handlers
    tick.start(250)
    code = app.exec()
    tick.stop()
    launcher.close()
    log.info("EdgeChat closed (exit code %s)", code)
    return int(code)
