"""Starting the desktop app: `run_app(library)`.

Kept light on purpose: only Qt and the window's own modules are imported before the window
shows; the core's heavy parts (Chroma, onnxruntime, the models) load in worker threads after."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)


def run_app(library: Path | None = None, argv: list[str] | None = None) -> int:
    t0 = time.perf_counter()
    import edgechat.core  # noqa: F401  (telemetry off before anything imports onnxruntime)
    from edgechat.core import paths

    library = Path(library).expanduser() if library else paths.default_library_dir()

    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from edgechat.ui.crash import ExceptionHook, setup_logging
    from edgechat.ui.single_instance import InstanceServer, notify_running

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("EdgeChat")
    app.setOrganizationName("EdgeChat")
    app.setApplicationDisplayName("EdgeChat")
    QGuiApplication.setDesktopFileName("edgechat")
    from edgechat.ui.resources import app_icon

    app.setWindowIcon(app_icon())
    log_path = setup_logging()
    hook = ExceptionHook()
    hook.install()
    # Short GIL time slices: the GUI thread gets back quickly from the worker threads.
    sys.setswitchinterval(0.002)

    if notify_running(library):
        print(f"EdgeChat is already open for {library}; it was brought to the front.", file=sys.stderr)
        return 0
    server = InstanceServer(library)
    server.listen()

    from edgechat.ui.mainwindow import MainWindow

    window = MainWindow(library)
    server.sig_activate.connect(window.bring_forward)
    window.show()
    shown = time.perf_counter() - t0
    log.info("window shown %.3f s after launch (library %s, log %s)", shown, library, log_path)
    QTimer.singleShot(0, lambda: log.info("first event loop turn %.3f s after launch", time.perf_counter() - t0))
    code = app.exec()
    server.close()
    return int(code)
