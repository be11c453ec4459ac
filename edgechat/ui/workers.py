"""The window's side of the engine protocol (edgechat.service.protocol).

The window sends typed commands with `send()` and receives typed events as Qt signals, grouped
by what they are about:

    host.index   Status EngineReady EngineFailed JobStarted Progress JobFinished JobFailed
                 LibraryListing WatchList Idle (and QueueState, kept as busy / pending())
    host.answer  AnswerDelta AnswerSources AnswerStatus AnswerDone AnswerFailed ClientInfo ModelsListed
    host.docs    a checked source, with QtPdf's outline of the passage for a PDF

Two hosts with that one surface:

- `EngineProcess` (the app): the engine runs in a child process (edgechat.service.host), so
  C extensions that hold the GIL for long (Chroma's upsert, a model's prompt prefill) cannot
  freeze the window; a reader thread turns the child's events into signals.
- `Workers` (tests): the same engine service on threads of this process, so a test can hand in
  a prepared Engine (embedder) and chat client.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from PySide6.QtCore import QObject, QThread, Signal, Slot

from edgechat.core.engine import ChunkSettings
from edgechat.core.records import SourceCheck, SourceStatus
from edgechat.service.host import ClientFactory, EngineFactory
from edgechat.service.protocol import (
    AnswerDelta,
    AnswerDone,
    AnswerFailed,
    AnswerSources,
    AnswerStatus,
    CheckSource,
    ClientInfo,
    Close,
    Closed,
    Command,
    EngineFailed,
    EngineReady,
    Event,
    FailureKind,
    Idle,
    IndexJob,
    JobFailed,
    JobFinished,
    JobStarted,
    LibraryListing,
    ModelsListed,
    Progress,
    QueueState,
    Seen,
    SourceChecked,
    SourceRef,
    Status,
    SubmitJob,
    WatchList,
)

log = logging.getLogger(__name__)


class IndexSignals(QObject):
    sig_status = Signal(object)  # Status
    sig_engine_ready = Signal(object)  # EngineReady
    sig_engine_failed = Signal(object)  # EngineFailed
    sig_job_started = Signal(object)  # JobStarted
    sig_progress = Signal(object)  # Progress
    sig_job_finished = Signal(object)  # JobFinished
    sig_job_failed = Signal(object)  # JobFailed
    sig_files = Signal(object)  # LibraryListing
    sig_watch = Signal(object)  # WatchList
    sig_idle = Signal(object)  # Idle


class AnswerSignals(QObject):
    sig_delta = Signal(object)  # AnswerDelta
    sig_sources = Signal(object)  # AnswerSources
    sig_status = Signal(object)  # AnswerStatus
    sig_done = Signal(object)  # AnswerDone
    sig_failed = Signal(object)  # AnswerFailed
    sig_client = Signal(object)  # ClientInfo
    sig_models = Signal(object)  # ModelsListed


_INDEX_SIGNALS: dict[type, str] = {
    Status: "sig_status", EngineReady: "sig_engine_ready", EngineFailed: "sig_engine_failed",
    JobStarted: "sig_job_started", Progress: "sig_progress", JobFinished: "sig_job_finished",
    JobFailed: "sig_job_failed", LibraryListing: "sig_files", WatchList: "sig_watch", Idle: "sig_idle",
}
_ANSWER_SIGNALS: dict[type, str] = {
    AnswerDelta: "sig_delta", AnswerSources: "sig_sources", AnswerStatus: "sig_status", AnswerDone: "sig_done", AnswerFailed: "sig_failed",
    ClientInfo: "sig_client", ModelsListed: "sig_models",
}


# ====================================================================== the source viewer


@dataclass
class PdfPlacement:
    """Where the cited passage is on a PDF page, in QtPdf's own terms."""

    page_count: int
    page_index: int
    polygons: list[list[tuple[float, float]]] = field(default_factory=list)
    span: tuple[int, int] | None = None  # characters of QtPdf's page text
    exact: bool = False  # the indexed offsets were QtPdf's (PDFium indexed it): no alignment needed
    selected_text: str = ""
    note: str = ""  # why the passage is shown without a highlight


@dataclass
class LoadedSource:
    """A cited source, ready for the viewer: the source as the answer (or saved chat) has it,
    the engine's check of its file, and for a PDF where the passage is."""

    source: dict
    check: SourceCheck
    pdf: PdfPlacement | None = None


class DocumentWorker(QObject):
    """Lives on its own QThread. Takes the engine's check of a cited file and, for a PDF, adds
    QtPdf's outline of the passage: the chunk text is aligned to QtPdf's own page text, then
    getSelectionAtIndex gives the outline. Doing that here keeps page-text extraction (tens of
    ms on big pages) off the GUI thread; QtPdf serialises its use of pdfium internally, so a
    worker-owned QPdfDocument is safe. Only the newest request is ever shown: this is the one
    place where replies to superseded clicks are dropped."""

    sig_loaded = Signal(object)  # LoadedSource
    _checked = Signal(object)  # SourceChecked, delivered to this worker's thread

    def __init__(self, host: "EngineHost") -> None:
        super().__init__()
        self._host = host
        self._latest = 0
        self._sources: dict[int, dict] = {}  # the newest request's source
        self._lock = threading.Lock()
        self._pdf = None
        self._pdf_key: tuple | None = None
        self._checked.connect(self._finish)

    def show(self, source: dict) -> None:
        """Ask for a source (an answer's or a saved chat's); earlier requests are dropped."""
        with self._lock:
            self._latest += 1
            request_id = self._latest
            self._sources = {request_id: dict(source)}
        self._host.send(CheckSource(request_id, SourceRef(
            path=str(source.get("path") or ""), page=int(source.get("page") or 1),
            start=int(source.get("start") or 0), end=int(source.get("end") or 0),
            chunk_id=str(source.get("chunk_id") or ""), content=str(source.get("content") or ""),
            focus=tuple(source["focus"]) if source.get("focus") else None)))

    def checked(self, event: SourceChecked) -> None:
        """The engine's answer (any thread)."""
        if self._current(event.request_id):
            self._checked.emit(event)

    def _current(self, request_id: int) -> bool:
        with self._lock:
            return request_id == self._latest

    @Slot(object)
    def _finish(self, event: SourceChecked) -> None:
        if not self._current(event.request_id):
            return
        check = event.check
        with self._lock:
            source = self._sources.get(event.request_id, {})
        loaded = LoadedSource(source, check)
        if check.format == "pdf" and check.status in (SourceStatus.OK, SourceStatus.CHANGED):
            try:
                passage = check.chunk_text if check.status == SourceStatus.OK else ""
                if check.ocr:  # a page read by OCR: the index's word boxes, not QtPdf's text
                    loaded.pdf = self._place_by_boxes(check, passage)
                else:
                    loaded.pdf = self._place_in_pdf(check.path, check.stamp, check.page, passage, check.start,
                                                    check.end)
            except Exception as e:  # noqa: BLE001 - any failure is shown in the viewer
                log.exception("placing the passage in %s failed", check.path)
                check.status, check.message = SourceStatus.ERROR, str(e) or type(e).__name__
        if self._current(event.request_id):
            self.sig_loaded.emit(loaded)

    def _place_by_boxes(self, check: SourceCheck, passage: str) -> PdfPlacement | None:
        """A passage on a page read by OCR: the boxes of its words, as the index keeps them (page
        points from the top left, as QtPdf's outlines are), drawn over the page image."""
        out = self._place_in_pdf(check.path, check.stamp, check.page, "")
        if out is None or not passage:
            return out
        if not check.boxes:
            out.note = "The cited passage could not be located on this page; it is shown without a highlight."
            return out
        pad = 1.0  # a point round the ink, as a text selection has round its glyphs
        out.polygons = [[(x0 - pad, y0 - pad), (x1 + pad, y0 - pad), (x1 + pad, y1 + pad), (x0 - pad, y1 + pad)]
                        for x0, y0, x1, y1 in check.boxes]
        out.span = (check.start, check.end)
        out.exact = True
        out.selected_text = passage
        return out

    def _place_in_pdf(self, path: str, stamp: tuple | None, page: int, passage: str, start: int = 0,
                      end: int = 0) -> PdfPlacement | None:
        from PySide6.QtPdf import QPdfDocument

        from edgechat.ui.align import align_passage, exact_span, utf16_index

        if self._pdf is None:
            self._pdf = QPdfDocument()
        doc = self._pdf
        if self._pdf_key != (path, stamp):
            doc.close()
            err = doc.load(path)
            self._pdf_key = (path, stamp) if err == QPdfDocument.Error.None_ else None
            if err != QPdfDocument.Error.None_:
                raise RuntimeError(f"QtPdf cannot open this file ({err.name}).")
        count = doc.pageCount()
        index = min(max(page - 1, 0), max(count - 1, 0))
        out = PdfPlacement(page_count=count, page_index=index)
        if not passage:
            return out
        page_text = doc.getAllText(index).text()
        span = exact_span(page_text, passage, start, end)  # indexed with PDFium: QtPdf's own offsets
        out.exact = span is not None
        if span is None:
            span = align_passage(page_text, passage, hint=start)
        if span is None:
            out.note = "The cited passage could not be located on this page; it is shown without a highlight."
            return out
        a, b = utf16_index(page_text, span[0]), utf16_index(page_text, span[1])
        sel = doc.getSelectionAtIndex(index, a, b - a)
        out.span = (span[0], span[1])
        out.polygons = [[(p.x(), p.y()) for p in poly] for poly in sel.bounds()]
        out.selected_text = sel.text()
        return out


# ====================================================================== the two hosts


class EngineHost(QObject):
    """What both hosts share: send() commands, events out as signals, the job queue's state."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.index = IndexSignals()
        self.answer = AnswerSignals()
        self.docs = DocumentWorker(self)
        self._docs_thread = QThread(self)
        self._docs_thread.setObjectName("edgechat-docs")
        self.docs.moveToThread(self._docs_thread)
        self._jobs_sent = 0
        self._jobs_seen = 0
        self._queue = QueueState(False, 0)

    def send(self, cmd: Command) -> None:
        raise NotImplementedError

    def submit(self, job: IndexJob) -> None:
        self._jobs_sent += 1
        self.send(SubmitJob(job, self._jobs_sent))

    @property
    def busy(self) -> bool:
        """An index job is running."""
        return self._queue.busy

    def pending(self) -> int:
        """Index jobs queued and not started, counting those still on their way."""
        return self._queue.pending + max(0, self._jobs_sent - self._jobs_seen)

    def deliver(self, event: Event) -> None:
        """An event from the engine (any thread): bookkeeping, then the matching signal."""
        if isinstance(event, Seen):
            self._jobs_seen = max(self._jobs_seen, event.seq)
        elif isinstance(event, QueueState):
            self._queue = event
        elif isinstance(event, SourceChecked):
            self.docs.checked(event)
        elif type(event) in _INDEX_SIGNALS:
            getattr(self.index, _INDEX_SIGNALS[type(event)]).emit(event)
        elif type(event) in _ANSWER_SIGNALS:
            getattr(self.answer, _ANSWER_SIGNALS[type(event)]).emit(event)
        else:
            log.warning("unexpected event %r from the engine", event)

    def _reset_queue(self) -> None:
        self._jobs_sent = self._jobs_seen = 0
        self._queue = QueueState(False, 0)


class Workers(EngineHost):
    """The engine service on threads of this process (tests, and anything injecting factories).
    Connect to the signals, then start()."""

    def __init__(self, engine_factory: EngineFactory, client_factory: ClientFactory | None = None, *,
                 chunk_settings: ChunkSettings | None = None, model: str = "", parent: QObject | None = None) -> None:
        from edgechat.service.host import EngineService, choose_client  # the engine's own modules, on demand

        super().__init__(parent)
        self._service = EngineService(engine_factory, self.deliver, client_factory=client_factory or choose_client,
                                      chunk_settings=chunk_settings, model=model)
        self._closed = False

    @property
    def engine(self):
        """The Engine itself (only this host has it in the window's process: tests look inside)."""
        return self._service.engine

    def start(self) -> None:
        self._docs_thread.start()
        self._service.start()

    def send(self, cmd: Command) -> None:
        if not self._closed:
            self._service.handle(cmd)

    @property
    def running(self) -> bool:
        return self._docs_thread.isRunning() or self._service.running

    def close(self, timeout: float = 60.0) -> bool:
        """Cancel everything, stop the threads and wait for them; then close the library."""
        if self._closed:
            return True
        self._closed = True
        ok = self._service.shutdown(timeout)
        self._docs_thread.quit()
        self._docs_thread.wait(10000)
        return ok


class _Reader(QThread):
    """Receives the engine process's events and delivers them."""

    def __init__(self, host: "EngineProcess", conn: Connection) -> None:
        super().__init__()
        self.setObjectName("edgechat-engine-reader")
        self.host = host
        self.conn = conn

    def run(self) -> None:
        while True:
            try:
                event = self.conn.recv()
            except (EOFError, OSError):
                break
            except Exception:  # noqa: BLE001 - a message that does not unpickle (any error pickle raises)
                log.exception("bad message from the engine process")
                continue
            if isinstance(event, Closed):
                self.host.closed_cleanly = True
                break
            try:
                self.host.deliver(event)
            except Exception:  # noqa: BLE001 - one event that fails must not stop the reader thread
                log.exception("handling %r from the engine process failed", event)
        self.host.reader_done()


class EngineProcess(EngineHost):
    """The engine in a child process. If the child dies, EngineFailed(DIED) is emitted and
    restart() starts a new one."""

    def __init__(self, library: str, *, chunk_settings: ChunkSettings | None = None, model: str = "",
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = str(library)
        self.chunk_settings = chunk_settings
        self.model = model
        self.process: BaseProcess | None = None
        self.conn: Connection | None = None
        self.closed_cleanly = False
        self._closing = False
        self._send_lock = threading.Lock()
        self._reader: _Reader | None = None

    # ---------------------------------------------------------------- life

    def start(self) -> None:
        from edgechat.service.host import host_main

        ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no Qt state is inherited
        parent_conn, child_conn = ctx.Pipe(duplex=True)
        self.conn = parent_conn
        self.closed_cleanly = False
        self.process = ctx.Process(target=host_main, args=(child_conn, self.library, self.chunk_settings, self.model),
                                   name="edgechat-engine", daemon=True)
        self.process.start()
        child_conn.close()
        if not self._docs_thread.isRunning():
            self._docs_thread.start()
        self._reader = _Reader(self, parent_conn)
        self._reader.start()

    def restart(self) -> None:
        self._stop_process(timeout=5.0)
        self._reset_queue()
        self.start()

    @property
    def running(self) -> bool:
        return bool(self.process is not None and self.process.is_alive()) or self._docs_thread.isRunning() or \
            bool(self._reader is not None and self._reader.isRunning())

    def send(self, cmd: Command) -> None:
        if self.conn is None:
            return
        try:
            with self._send_lock:
                self.conn.send(cmd)
        except (OSError, EOFError, BrokenPipeError, ValueError):
            log.warning("the engine process is gone; %s not sent", type(cmd).__name__)

    def reader_done(self) -> None:
        if self._closing or self.closed_cleanly:
            return
        code = None
        if self.process is not None:
            self.process.join(timeout=2)
            code = self.process.exitcode
        log.error("the engine process stopped unexpectedly (exit code %s)", code)
        self.index.sig_engine_failed.emit(
            EngineFailed(FailureKind.DIED, f"The engine process stopped unexpectedly (exit code {code})."))

    # ---------------------------------------------------------------- closing

    def _stop_process(self, timeout: float) -> bool:
        """Ask the child to close (cancel, join, close the library), wait, then make sure."""
        clean = True
        self.send(Close())
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
