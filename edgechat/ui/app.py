"""Starting the desktop app: `run_app(library)`.

Kept light on purpose: only Qt and the window's own modules are imported before the window
shows; the core's heavy parts (Chroma, onnxruntime, the models) load in worker threads after."""

from __future__ import annotations

import logging
import signal
import sys
import time
from pathlib import Path

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


def run_app(library: Path | None = None, argv: list[str] | None = None) -> int:
    t0 = time.perf_counter()
    from edgechat.core import paths

    library = Path(library).expanduser() if library else paths.default_library_dir()
    app = make_application(argv)

    from PySide6.QtCore import QTimer

    from edgechat.ui.single_instance import InstanceServer, notify_running

    if notify_running(library):
        print(f"EdgeChat is already open for {library}; it was brought to the front.", file=sys.stderr)
        return 0
    server = InstanceServer(library)
    server.listen()

    from edgechat.ui.mainwindow import MainWindow

    window = MainWindow(library)
    server.sig_activate.connect(window.bring_forward)
    window.show()
    log.info("window shown %.3f s after run_app (library %s)", time.perf_counter() - t0, library)
    QTimer.singleShot(0, settle)

    # Ctrl+C or a polite kill closes the window properly (threads joined, library released).
    def close_on_signal(*_args) -> None:
        QTimer.singleShot(0, window.close)

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
    server.close()
    log.info("EdgeChat closed (exit code %s)", code)
    return int(code)
