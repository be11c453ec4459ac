"""Logs to a rotating file in the user log directory, Qt's own messages routed into logging,
and unhandled exceptions shown to the user in a dialog (with the details and the log's path)
instead of the app dying silently."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

from edgechat.core import paths

log = logging.getLogger("edgechat")
qt_log = logging.getLogger("qt")

LOG_FILE = "edgechat.log"
_handler: RotatingFileHandler | None = None


def log_file() -> Path:
    return paths.log_dir() / LOG_FILE


def setup_logging(level: int = logging.INFO) -> Path:
    """A rotating log file (1 MB x 3) for the whole process; returns its path."""
    global _handler
    target = log_file()
    if _handler is not None:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    _handler = RotatingFileHandler(target, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(_handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    install_qt_message_handler()
    return target


def install_qt_message_handler() -> None:
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    levels = {
        QtMsgType.QtDebugMsg: logging.DEBUG,
        QtMsgType.QtInfoMsg: logging.INFO,
        QtMsgType.QtWarningMsg: logging.WARNING,
        QtMsgType.QtCriticalMsg: logging.ERROR,
        QtMsgType.QtFatalMsg: logging.CRITICAL,
    }

    def handler(kind, context, message: str) -> None:
        where = f" ({context.category})" if context and context.category and context.category != "default" else ""
        qt_log.log(levels.get(kind, logging.WARNING), "%s%s", message, where)

    qInstallMessageHandler(handler)


def format_exception(exc_type, exc: BaseException, tb: TracebackType | None) -> str:
    return "".join(traceback.format_exception(exc_type, exc, tb))


class ExceptionHook:
    """sys.excepthook (and threading.excepthook): log, then show a dialog once at a time."""

    def __init__(self) -> None:
        self._showing = False
        self.shown: list[str] = []  # summaries of what was shown (for tests)

    def install(self) -> None:
        sys.excepthook = self
        threading.excepthook = self._thread_hook

    def _thread_hook(self, args) -> None:
        self(args.exc_type, args.exc_value, args.exc_traceback)

    def __call__(self, exc_type, exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        details = format_exception(exc_type, exc, tb)
        log.error("unhandled exception:\n%s", details)
        summary = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
        self.shown.append(summary)
        self.show_dialog(summary, details)

    def show_dialog(self, summary: str, details: str) -> None:
        from PySide6.QtCore import QThread
        from PySide6.QtWidgets import QApplication, QMessageBox

        app = QApplication.instance()
        if app is None or self._showing or QThread.currentThread() is not app.thread():
            return  # logged; a dialog only from the GUI thread, one at a time
        self._showing = True
        try:
            box = QMessageBox(QMessageBox.Icon.Critical, "EdgeChat hit a problem",
                              f"Something went wrong: {summary}\n\nYour documents and chats are safe. "
                              f"The details are in the log file:\n{log_file()}")
            box.setDetailedText(details)
            box.setStandardButtons(QMessageBox.StandardButton.Ok)
            box.exec()
        finally:
            self._showing = False


def teardown_logging() -> None:
    """Undo setup_logging (tests)."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(None)
