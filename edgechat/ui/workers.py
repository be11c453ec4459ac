"""The workers the window talks to: the only part of the UI that reaches the core.

    index    creates the Engine, then runs index / refresh / remove jobs one at a time;
             reports progress, the library's file list and what to watch
    answer   streams answers for numbered requests; a new request or Stop cancels the one in
             flight (tokens of a cancelled request are never delivered for it)
    docs     prepares a cited document for the viewer: is the file still the one indexed, its
             text (formats other than PDF), and QtPdf's outline of the passage (PDF)

Two hosts with the same signals and methods:

- `EngineProcess` (the app): the core runs in a child process (edgechat.service.host),
  so C extensions that hold the GIL for long (Chroma's upsert, a model's prompt prefill)
  cannot freeze the window; a reader thread turns the child's messages into signals.
- `Workers` (tests, and any caller injecting factories): the same runners on QThreads in
  this process, so a test can hand in a prepared embedder and chat client.

Everything crosses as plain data (dicts, lists, str, numbers, the core's records); every
exception becomes a failure signal with a readable message; close() cancels, stops and joins.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from edgechat.service.runners import (
    AnswerRunner,
    ClientFactory,
    DocumentInspector,
    EngineFactory,
    IndexJob,
    IndexRunner,
    default_client_factory,
    describe,
)

log = logging.getLogger(__name__)

__all__ = ["EngineProcess", "IndexJob", "Workers", "default_client_factory"]


# ====================================================================== signals


class IndexSignals(QObject):
    sig_status = Signal(str)  # a line for the status bar (model download, ...)
    sig_engine_ready = Signal(object)  # the Engine in-process; None from the engine process
    sig_engine_failed = Signal(str, str)  # kind ("locked" | "error" | "died"), message
    sig_job_started = Signal(str, list)  # kind, paths
    sig_progress = Signal(dict)  # IndexProgress fields + eta, paused, elapsed
    sig_job_finished = Signal(str, dict)  # kind, summary (IndexSummary.to_dict() or {"removed": n})
    sig_job_failed = Signal(str, str)  # kind, message
    sig_files = Signal(list, list)  # roots, files (jobs.file_dict)
    sig_watch = Signal(list, list)  # directories, files to watch
    sig_idle = Signal()
    sig_state = Signal(bool, int)  # busy, jobs queued


class AnswerSignals(QObject):
    sig_delta = Signal(int, str)  # request id, text to append
    sig_done = Signal(int, object)  # request id, ChatResponse (plain data)
    sig_failed = Signal(int, str)  # request id, message
    sig_status = Signal(int, str)  # request id, "Loading the language model…"
    sig_client = Signal(dict)  # {"name", "extractive", "note"}
    sig_models = Signal(list, str)  # [(name, label)] installed language models, the active one


_INDEX_EVENTS = {"status": "sig_status", "engine_ready": "sig_engine_ready", "engine_failed": "sig_engine_failed",
                 "job_started": "sig_job_started", "progress": "sig_progress", "job_finished": "sig_job_finished",
                 "job_failed": "sig_job_failed", "files": "sig_files", "watch": "sig_watch", "idle": "sig_idle",
                 "state": "sig_state"}
_ANSWER_EVENTS = {"delta": "sig_delta", "done": "sig_done", "failed": "sig_failed", "answer_status": "sig_status",
                  "client": "sig_client", "models": "sig_models"}


def _emitter(obj: QObject, table: dict[str, str]):
    def emit(name: str, *args: Any) -> None:
        getattr(obj, table[name]).emit(*args)

    return emit


# ====================================================================== documents (both hosts)


class DocumentWorker(QObject):
    """Lives on its own QThread. Takes what the engine side found out about a cited file
    (jobs.DocumentInspector) and, for a PDF, adds QtPdf's outline of the passage: the chunk
    text is aligned to QtPdf's own page text, then getSelectionAtIndex gives the outline.
    Doing that here keeps page-text extraction (tens of ms on big pages) off the GUI thread;
    QtPdf serialises its use of pdfium internally, so a worker-owned QPdfDocument is safe."""

    sig_loaded = Signal(int, dict)
    _inspect_here = Signal(int, dict)
    _inspected = Signal(int, dict)
    _set_engine = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.engine: Any = None
        self.remote: Any = None  # EngineProcess: inspection happens in the engine process
        self._inspector = DocumentInspector()
        self._latest = 0
        self._lock = threading.Lock()
        self._pdf: Any = None
        self._pdf_key: tuple | None = None
        self._inspect_here.connect(self._run_here)
        self._inspected.connect(self._finish)
        self._set_engine.connect(self._apply_engine)

    def set_engine(self, engine: Any) -> None:
        self._set_engine.emit(engine)

    def submit(self, request_id: int, source: dict) -> None:
        with self._lock:
            self._latest = request_id
        if self.remote is not None:
            self.remote.send("inspect", request_id, source)
        else:
            self._inspect_here.emit(request_id, source)

    def inspected(self, request_id: int, result: dict) -> None:
        """The engine process's answer (called from the reader thread)."""
        self._inspected.emit(request_id, result)

    @Slot(object)
    def _apply_engine(self, engine: Any) -> None:
        self.engine = engine

    def _current(self, request_id: int) -> bool:
        with self._lock:
            return request_id == self._latest

    @Slot(int, dict)
    def _run_here(self, request_id: int, source: dict) -> None:
        if self._current(request_id):
            self._finish(request_id, self._inspector.inspect(self.engine, source))

    @Slot(int, dict)
    def _finish(self, request_id: int, result: dict) -> None:
        if not self._current(request_id):
            return
        if result.get("format") == "pdf" and result.get("status") in ("ok", "changed"):
            try:
                passage = str(result.get("chunk_text") or "") if result.get("status") == "ok" else ""
                result.update(self._place_in_pdf(result["path"], tuple(result.get("stamp") or ()),
                                                 int(result.get("page") or 1), passage))
            except Exception as e:  # noqa: BLE001
                log.exception("placing the passage in %s failed", result.get("path"))
                result.update(status="error", message=describe(e))
        self.sig_loaded.emit(request_id, result)

    def _place_in_pdf(self, path: str, stamp: tuple, page: int, passage: str) -> dict:
        from PySide6.QtPdf import QPdfDocument

        from edgechat.ui.align import align_passage

        if self._pdf is None:
            self._pdf = QPdfDocument()
        doc = self._pdf
        if self._pdf_key != (path, stamp):
            doc.close()
            err = doc.load(path)
            self._pdf_key = (path, stamp) if err == QPdfDocument.Error.None_ else None
            if err != QPdfDocument.Error.None_:
                return {"status": "error", "message": f"QtPdf cannot open this file ({err.name})."}
        count = doc.pageCount()
        index = min(max(page - 1, 0), max(count - 1, 0))
        out: dict[str, Any] = {"page_count": count, "page_index": index, "polygons": [], "span": None}
        if not passage:
            return out
        span = align_passage(doc.getAllText(index).text(), passage)
        if span is None:
            out["note"] = "The cited passage could not be located on this page; it is shown without a highlight."
            return out
        sel = doc.getSelectionAtIndex(index, span[0], span[1] - span[0])
        out["span"] = list(span)
        out["polygons"] = [[(p.x(), p.y()) for p in poly] for poly in sel.bounds()]
        out["selected_text"] = sel.text()
        return out


# ====================================================================== in this process


class IndexWorker(IndexSignals):
    _wake = Signal()
    _open = Signal()

    def __init__(self, engine_factory: EngineFactory) -> None:
        super().__init__()
        self.runner = IndexRunner(engine_factory, _emitter(self, _INDEX_EVENTS), self._wake.emit)
        self._wake.connect(self._drain)
        self._open.connect(self._do_open)

    @property
    def engine(self) -> Any:
        return self.runner.engine

    @property
    def busy(self) -> bool:
        return self.runner.busy

    @property
    def chunk_settings(self) -> Any:
        return self.runner.chunk_settings

    @chunk_settings.setter
    def chunk_settings(self, value: Any) -> None:
        self.runner.chunk_settings = value  # read at the start of each job

    def request_open(self) -> None:
        self._open.emit()

    def submit(self, job: IndexJob) -> None:
        self.runner.submit(job)

    def cancel(self) -> None:
        self.runner.cancel()

    def stop(self) -> None:
        self.runner.stop()

    def pending(self) -> int:
        return self.runner.pending()

    @Slot()
    def _do_open(self) -> None:
        self.runner.open()

    @Slot()
    def _drain(self) -> None:
        self.runner.drain()


class AnswerWorker(AnswerSignals):
    _ask = Signal(int, dict)
    _set_model = Signal(str)
    _set_engine = Signal(object)
    _probe = Signal()

    def __init__(self, client_factory: ClientFactory = default_client_factory) -> None:
        super().__init__()
        self.runner = AnswerRunner(client_factory, _emitter(self, _ANSWER_EVENTS))
        self._ask.connect(self._run)
        self._set_model.connect(self._apply_model)
        self._set_engine.connect(self._apply_engine)
        self._probe.connect(self._do_probe)

    def set_engine(self, engine: Any) -> None:
        self._set_engine.emit(engine)

    def set_model(self, setting: str) -> None:
        self._set_model.emit(setting)

    def probe_models(self) -> None:
        self._probe.emit()

    def submit(self, request_id: int, payload: dict) -> None:
        """Ask: cancels every earlier request, then queues this one (thread-safe)."""
        self.runner.register(request_id)
        self._ask.emit(request_id, payload)

    def cancel(self, request_id: int | None = None) -> None:
        self.runner.cancel(request_id)

    @Slot(object)
    def _apply_engine(self, engine: Any) -> None:
        self.runner.engine = engine

    @Slot(str)
    def _apply_model(self, setting: str) -> None:
        self.runner.set_model(setting)

    @Slot()
    def _do_probe(self) -> None:
        self.runner.probe_models()

    @Slot(int, dict)
    def _run(self, request_id: int, payload: dict) -> None:
        self.runner.run(request_id, payload)


class Workers(QObject):
    """The runners on three QThreads of this process. Connect to the workers' signals, then
    start()."""

    def __init__(self, engine_factory: EngineFactory, client_factory: ClientFactory = default_client_factory,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.index = IndexWorker(engine_factory)
        self.answer = AnswerWorker(client_factory)
        self.docs = DocumentWorker()
        self.engine: Any = None
        self._threads: list[QThread] = []
        for name, worker in (("edgechat-index", self.index), ("edgechat-answer", self.answer),
                             ("edgechat-docs", self.docs)):
            thread = QThread(self)
            thread.setObjectName(name)
            worker.moveToThread(thread)
            self._threads.append(thread)
        self.index.sig_engine_ready.connect(self._engine_ready)
        self._closed = False

    def start(self) -> None:
        for thread in self._threads:
            thread.start()
        self.index.request_open()  # the Engine (and Chroma) load in the index thread

    @Slot(object)
    def _engine_ready(self, engine: Any) -> None:
        self.engine = engine
        self.answer.set_engine(engine)
        self.docs.set_engine(engine)

    @property
    def running(self) -> bool:
        return any(t.isRunning() for t in self._threads)

    def close(self, timeout_ms: int = 60000) -> bool:
        """Cancel everything, stop the threads and wait for them; then close the library."""
        if self._closed:
            return True
        self._closed = True
        self.index.stop()
        self.answer.cancel()
        for thread in self._threads:
            thread.quit()
        ok = True
        for thread in self._threads:
            if not thread.wait(timeout_ms):
                log.error("thread %s did not stop within %d ms", thread.objectName(), timeout_ms)
                ok = False
        if ok:
            self.index.runner.close_engine()
        return ok


# ====================================================================== in the engine process


class RemoteIndex(IndexSignals):
    """The index worker of the engine process, seen from the app."""

    def __init__(self, host: "EngineProcess") -> None:
        super().__init__()
        self.host = host
        self.engine = None
        self._busy = False
        self._child_pending = 0
        self._sent = 0  # index commands sent
        self._seen = 0  # index commands the engine process has taken in
        self._chunk_settings: Any = None
        self.sig_state.connect(self._on_state)

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def chunk_settings(self) -> Any:
        return self._chunk_settings

    @chunk_settings.setter
    def chunk_settings(self, value: Any) -> None:
        self._chunk_settings = value
        if value is not None:
            self.host.send("chunk_settings", value.size, value.overlap)

    def _on_state(self, busy: bool, pending: int) -> None:
        self._busy = busy
        self._child_pending = pending

    def seen(self, seq: int) -> None:
        self._seen = max(self._seen, seq)

    def request_open(self) -> None:
        pass  # the engine process opens the library as it starts

    def submit(self, job: IndexJob) -> None:
        self._sent += 1
        self.host.send("index", job.to_dict(), self._sent)

    def cancel(self) -> None:
        self.host.send("cancel_index")

    def stop(self) -> None:
        self.host.send("cancel_index")

    def pending(self) -> int:
        return self._child_pending + max(0, self._sent - self._seen)


class RemoteAnswer(AnswerSignals):
    def __init__(self, host: "EngineProcess") -> None:
        super().__init__()
        self.host = host

    def set_engine(self, engine: Any) -> None:
        pass

    def set_model(self, setting: str) -> None:
        self.host.send("set_model", setting)

    def probe_models(self) -> None:
        self.host.send("probe_models")

    def submit(self, request_id: int, payload: dict) -> None:
        self.host.send("ask", request_id, payload)

    def cancel(self, request_id: int | None = None) -> None:
        self.host.send("cancel_answer", request_id)


class _Reader(QThread):
    """Receives the engine process's messages and turns them into the proxies' signals."""

    def __init__(self, host: "EngineProcess") -> None:
        super().__init__()
        self.setObjectName("edgechat-engine-reader")
        self.host = host

    def run(self) -> None:
        conn = self.host.conn
        while True:
            try:
                name, args = conn.recv()
            except (EOFError, OSError):
                break
            except Exception:  # noqa: BLE001 - a message that does not unpickle
                log.exception("bad message from the engine process")
                continue
            if name == "closed":
                self.host.closed_cleanly = True
                break
            try:
                self.host.dispatch(name, args)
            except Exception:  # noqa: BLE001
                log.exception("handling %s from the engine process failed", name)
        self.host.reader_done()


class EngineProcess(QObject):
    """The core in a child process. Same surface as `Workers`: .index, .answer, .docs,
    start(), close(), running. If the child dies, sig_engine_failed("died", ...) is emitted
    and restart() starts a new one."""

    def __init__(self, library: str, settings: dict | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = str(library)
        self.settings = dict(settings or {})
        self.index = RemoteIndex(self)
        self.answer = RemoteAnswer(self)
        self.docs = DocumentWorker()
        self.docs.remote = self
        self.engine = None
        self.process: Any = None
        self.conn: Any = None
        self.closed_cleanly = False
        self._closing = False
        self._send_lock = threading.Lock()
        self._reader: _Reader | None = None
        self._docs_thread = QThread(self)
        self._docs_thread.setObjectName("edgechat-docs")
        self.docs.moveToThread(self._docs_thread)

    # ---------------------------------------------------------------- life

    def start(self) -> None:
        import multiprocessing as mp

        from edgechat.service.host import host_main

        ctx = mp.get_context("spawn")  # a fresh interpreter: no Qt state is inherited
        parent_conn, child_conn = ctx.Pipe(duplex=True)
        self.conn = parent_conn
        self.closed_cleanly = False
        self.process = ctx.Process(target=host_main, args=(child_conn, self.library, self.settings),
                                   name="edgechat-engine", daemon=True)
        self.process.start()
        child_conn.close()
        if not self._docs_thread.isRunning():
            self._docs_thread.start()
        self._reader = _Reader(self)
        self._reader.start()

    def restart(self) -> None:
        self._stop_process(timeout=5.0)
        self.index._sent = self.index._seen = self.index._child_pending = 0
        self.start()

    @property
    def running(self) -> bool:
        return bool(self.process is not None and self.process.is_alive()) or self._docs_thread.isRunning() or \
            bool(self._reader is not None and self._reader.isRunning())

    def send(self, *msg: Any) -> None:
        if self.conn is None:
            return
        try:
            with self._send_lock:
                self.conn.send(msg)
        except (OSError, EOFError, BrokenPipeError, ValueError):
            log.warning("the engine process is gone; %s not sent", msg[0])

    # ---------------------------------------------------------------- messages (reader thread)

    def dispatch(self, name: str, args: tuple) -> None:
        if name == "seen":
            self.index.seen(args[0])
        elif name == "inspected":
            self.docs.inspected(*args)
        elif name in _INDEX_EVENTS:
            getattr(self.index, _INDEX_EVENTS[name]).emit(*args)
        elif name in _ANSWER_EVENTS:
            getattr(self.answer, _ANSWER_EVENTS[name]).emit(*args)
        else:
            log.warning("unknown message %r from the engine process", name)

    def reader_done(self) -> None:
        if self._closing or self.closed_cleanly:
            return
        code = None
        if self.process is not None:
            self.process.join(timeout=2)
            code = self.process.exitcode
        log.error("the engine process stopped unexpectedly (exit code %s)", code)
        self.index.sig_engine_failed.emit("died", f"The engine process stopped unexpectedly (exit code {code}).")

    # ---------------------------------------------------------------- closing

    def _stop_process(self, timeout: float) -> bool:
        """Ask the child to close (cancel, join, close the library), wait, then make sure."""
        clean = True
        self.send("close")
        if self.process is not None:
            self.process.join(timeout)
            if self.process.is_alive():
                # Still finishing a long step (a parser on a big file): the library is
                # crash-safe, so stopping it now leaves it consistent.
                log.warning("the engine process did not stop within %.0f s; terminating it", timeout)
                clean = False
                self.process.terminate()
                self.process.join(5)
                if self.process.is_alive():
                    self.process.kill()
                    self.process.join(5)
        if self._reader is not None:
            self._reader.wait(5000)
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None
        return clean

    def close(self, timeout: float = 20.0) -> bool:
        if self._closing:
            return True
        self._closing = True
        clean = self._stop_process(timeout)
        self._docs_thread.quit()
        self._docs_thread.wait(10000)
        return clean
