"""Fixtures for the desktop app's tests: a real Engine on a temporary library (with the real,
cached embedder), answered by the extractive client unless a test says otherwise."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

# PySide6 and pytest-qt are hard dependencies: a broken Qt (a missing libEGL on a headless
# machine) must fail the run here, not turn the window's tests into skips.
import pytestqt  # noqa: F401
from PySide6 import QtWidgets  # noqa: F401
from PySide6.QtCore import QSettings

from edgechat.ui.qtfix import guard

guard()  # before any model or signal of a test exists (see edgechat/ui/qtfix.py)

from edgechat.core.answering.extractive import ExtractiveClient
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, StopReason


def pytest_collection_modifyitems(config, items):
    """Qt warnings fail the GUI tests, except the offscreen platform's note about size hints."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore("propagateSizeHints", "QFileSystemWatcher"))


class SlowClient(ExtractiveClient):
    """The extractive answer, streamed a word at a time with a pause between words: stands in
    for a language model's token stream (no model is needed to test streaming and Stop)."""

    name = "slow-extractive"
    kind = ClientKind.MODEL  # streams like a model, and is treated as one

    def __init__(self, delay: float = 0.05) -> None:
        super().__init__()
        self.delay = delay
        self.started = threading.Event()
        self.emitted: list[str] = []

    def stream(self, messages: Sequence[ChatMessage], options: ChatOptions,
               cancel: threading.Event | None = None) -> Iterator[ChatUpdate]:
        full = ""
        for upd in super().stream(messages, options, None):
            full = upd.text if upd.done else full
        text = ""
        self.started.set()
        for i, word in enumerate(full.split(" ")):
            if cancel is not None and cancel.is_set():
                yield ChatUpdate(done=True, text=text, stop_reason=StopReason.CANCELLED)
                return
            delta = word if i == 0 else " " + word
            text += delta
            self.emitted.append(delta)
            yield ChatUpdate(delta=delta, text=text)
            time.sleep(self.delay)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)


class ScriptedClient(SlowClient):
    """A fake language model (named as such) that "writes" its fixed TEXT a word at a time,
    whatever it is asked: for what the app does with an answer it did not choose."""

    name = "scripted-fake"
    TEXT = ""

    def stream(self, messages: Sequence[ChatMessage], options: ChatOptions,
               cancel: threading.Event | None = None) -> Iterator[ChatUpdate]:
        text = ""
        self.started.set()
        for i, word in enumerate(self.TEXT.split(" ")):
            delta = word if i == 0 else " " + word
            text += delta
            yield ChatUpdate(delta=delta, text=text)
            time.sleep(self.delay)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)


@pytest.fixture
def settings_file(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, tmp_path: Path, embedder, settings_file):
    """make_window(library=None, client=None) -> a shown MainWindow whose library is open. A
    team library (library="chroma://...") is read as `identity` (default: the OS account)."""
    from edgechat.core.engine import ClientChoice, Engine
    from edgechat.ui.mainwindow import MainWindow

    windows = []

    def make(library: Path | str | None = None, client=None, wait: bool = True, qsettings: QSettings | None = None,
             identity=None):
        lib = library or tmp_path / "library"
        chat_client = client or ExtractiveClient()
        w = MainWindow(
            lib,
            engine_factory=lambda status: Engine(lib, embedder=embedder, identity=identity),
            client_factory=lambda engine, setting: ClientChoice(chat_client, "No language model is installed."),
            qsettings=qsettings or settings_file,
        )
        qtbot.addWidget(w)
        w.show()
        windows.append(w)
        if wait:
            qtbot.waitUntil(lambda: w.engine_ready, timeout=30000)
            wait_idle(qtbot, w)
        return w

    yield make
    for w in windows:
        if w.workers.running:
            w.close()


def wait_idle(qtbot, w, timeout: int = 60000) -> None:
    """Until the index worker has nothing running or queued (and its signals are delivered)."""
    def idle() -> bool:
        return not w.workers.busy and w.workers.pending() == 0
    qtbot.waitUntil(idle, timeout=timeout)
    qtbot.wait(50)
    qtbot.waitUntil(idle, timeout=timeout)
