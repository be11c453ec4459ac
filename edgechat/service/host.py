"""The engine process: the app's core work (Chroma, the embedder, the language model, parsers)
runs here, in a child process, so nothing it does can hold the GUI process's GIL.

Chroma's upsert holds the GIL for a time that grows with the vectors written (a big file's
chunks take about a second) and a language model's prompt prefill holds it for seconds; in the
same process as the window that froze the GUI (benchmarks/gui_responsiveness.py measures the
window's pauses). Here, the GUI process only unpickles small messages.

No Qt in this module (the child imports only the core). The window sends the commands of
edgechat.service.protocol over a multiprocessing Connection and receives its events, pickled.
Three threads share one Engine (edgechat.core.engine): indexing (at lower CPU priority),
answering, and checking cited files for the viewer.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from multiprocessing.connection import Connection

import edgechat.core  # noqa: F401  (telemetry off before onnxruntime loads)
from edgechat.core.engine import ChunkSettings, Engine, describe_error
from edgechat.core.records import SourceCheck, SourceStatus
from edgechat.service.answer_runner import AnswerRunner, ClientFactory, choose_client
from edgechat.service.index_runner import EngineFactory, IndexRunner, default_engine_factory
from edgechat.service.protocol import (
    Ask,
    CancelAnswer,
    CancelIndex,
    CheckSource,
    Close,
    Closed,
    Command,
    Event,
    ProbeModels,
    Seen,
    SetChunkSettings,
    SetModel,
    SourceChecked,
    SubmitJob,
)

log = logging.getLogger(__name__)

LOG_FILE = "engine.log"


def _setup_logging() -> None:
    from edgechat.core import paths

    try:
        folder = paths.log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(folder / LOG_FILE, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
    except OSError:
        pass


INDEX_NICENESS = 10


def _lower_priority() -> None:
    """Indexing yields the CPU to everything else: the window, answering, the user's other
    programs. Linux keeps a niceness per thread (threads started from this one, such as the
    indexer's parser, inherit it); elsewhere this does nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + INDEX_NICENESS))
    except (OSError, AttributeError):
        pass


class EngineService:
    """The engine's side of the protocol, with no transport: `handle(command)` from one thread
    (the process's receiving loop, or the window's thread in tests), events out through `send`
    from the service's three threads: indexing (at lower CPU priority), answering, and checking
    cited files for the viewer. They share one Engine, opened by the indexing thread."""

    def __init__(self, engine_factory: EngineFactory, send: Callable[[Event], None], *,
                 client_factory: ClientFactory = choose_client, chunk_settings: ChunkSettings | None = None,
                 model: str = "", lower_priority: bool = False) -> None:
        self.send = send
        self._lower_priority = lower_priority
        self._opened = threading.Event()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._answer_q: queue.Queue[Ask | SetModel | ProbeModels | None] = queue.Queue()
        self._check_q: queue.Queue[CheckSource | None] = queue.Queue()
        self.answer = AnswerRunner(send, client_factory)
        self.answer.set_model(model)
        self.index = IndexRunner(engine_factory, send, self._wake.set, on_ready=self._ready)
        if chunk_settings is not None:
            self.index.set_chunk_settings(chunk_settings)
        self._threads = [threading.Thread(target=f, name=n, daemon=True) for f, n in
                         ((self._index_loop, "engine-index"), (self._answer_loop, "engine-answer"),
                          (self._check_loop, "engine-docs"))]

    @property
    def engine(self) -> Engine | None:
        return self.index.engine

    def start(self) -> None:
        for t in self._threads:
            t.start()

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def _ready(self, engine: Engine) -> None:
        # The answering thread gets the Engine before the window hears it is ready (and starts
        # sending questions); the Engine itself never leaves the service.
        self.answer.engine = engine
        self._opened.set()

    # ---------------------------------------------------------------- commands

    def handle(self, cmd: Command) -> bool:
        """Act on one command; False once it was Close."""
        if isinstance(cmd, Close):
            return False
        if isinstance(cmd, SubmitJob):
            self.index.submit(cmd.job)
            self.send(Seen(cmd.seq))
        elif isinstance(cmd, CancelIndex):
            self.index.cancel()
        elif isinstance(cmd, SetChunkSettings):
            self.index.set_chunk_settings(cmd.settings)
        elif isinstance(cmd, Ask):
            self.answer.register(cmd.request_id)
            self._answer_q.put(cmd)
        elif isinstance(cmd, CancelAnswer):
            self.answer.cancel(cmd.request_id)
        elif isinstance(cmd, (SetModel, ProbeModels)):
            self._answer_q.put(cmd)
        elif isinstance(cmd, CheckSource):
            self._check_q.put(cmd)
        else:
            log.warning("unknown command %r", cmd)
        return True

    # ---------------------------------------------------------------- threads

    def _index_loop(self) -> None:
        if self._lower_priority:
            _lower_priority()
        try:
            if self.index.open() is None:
                return
            while not self._stopping.is_set():
                self._wake.wait(0.5)
                self._wake.clear()
                if not self._stopping.is_set():
                    self.index.drain()
        finally:
            self._opened.set()  # never leave the other threads waiting

    def _answer_loop(self) -> None:
        while (item := self._answer_q.get()) is not None:
            if isinstance(item, Ask):
                self._opened.wait()
                self.answer.run(item.request_id, item.request)
            elif isinstance(item, SetModel):
                self.answer.set_model(item.setting)
            else:
                self.answer.probe_models()

    def _check_loop(self) -> None:
        while (item := self._check_q.get()) is not None:
            self._opened.wait()
            engine = self.engine
            if engine is None:
                continue
            ref = item.source
            try:
                check = engine.check_source(ref.path, page=ref.page, start=ref.start, end=ref.end,
                                            chunk_id=ref.chunk_id, content=ref.content, focus=ref.focus)
            except Exception as e:  # noqa: BLE001 - shown in the viewer
                log.exception("checking %s for the viewer failed", ref.path)
                check = SourceCheck(ref.path, SourceStatus.ERROR, describe_error(e), page=ref.page)
            self.send(SourceChecked(item.request_id, check))

    # ---------------------------------------------------------------- closing

    def shutdown(self, timeout: float = 60.0) -> bool:
        """Cancel everything, join the threads, close the library. False if the indexing thread
        did not stop in time (the library is then left to crash recovery, never closed under a
        running writer)."""
        self._stopping.set()
        self.index.stop()
        self.answer.cancel()
        self._wake.set()
        self._answer_q.put(None)
        self._check_q.put(None)
        for t in self._threads:
            if t.is_alive():
                t.join(timeout=timeout)
        if self._threads[0].is_alive():
            return False
        self.index.close_engine()
        return True


def host_main(conn: Connection, library: str, chunk_settings: ChunkSettings | None, model: str) -> None:
    """Entry point of the engine process."""
    import signal

    # Ctrl+C in a terminal reaches the whole process group: the window decides when the engine
    # stops (it sends Close, and the library is closed cleanly), never the keyboard.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _setup_logging()
    log.info("engine process %d for %s", os.getpid(), library)
    send_lock = threading.Lock()
    alive = threading.Event()
    alive.set()

    def send(event: Event) -> None:
        if not alive.is_set():
            return
        try:
            with send_lock:
                conn.send(event)
        except (OSError, EOFError, BrokenPipeError):
            alive.clear()  # the window is gone

    service = EngineService(default_engine_factory(library), send, chunk_settings=chunk_settings, model=model,
                            lower_priority=True)
    service.start()
    try:
        while True:
            try:
                cmd: Command = conn.recv()
            except (EOFError, OSError):
                break  # the window went away: close cleanly anyway
            if not service.handle(cmd):
                break
    finally:
        service.shutdown()
        log.info("engine process %d closing", os.getpid())
        send(Closed())
        try:
            conn.close()
        except OSError:
            pass
