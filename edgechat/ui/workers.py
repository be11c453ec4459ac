"""Long-lived worker objects on their own QThreads: the only code of the UI that calls the core.

    IndexWorker    creates the Engine (in its thread), then runs index / refresh / remove jobs
                   one at a time; reports progress, the library's file list and what to watch
    AnswerWorker   streams answers (engine.ask) for numbered requests; a new request or Stop
                   cancels the one in flight
    DocumentWorker reads what the source viewer needs: is the file still the one indexed, and
                   (for formats other than PDF) its text

They talk to the GUI only through signals carrying plain data (dicts, lists, str, int, and the
core's own plain records such as ChatResponse). Every exception inside them becomes a failure
signal with a readable message. `Workers` owns the three threads and joins them on close().

Answering has priority over indexing for the CPU: the Engine pauses indexing between batches
while `engine.answering` is set, which engine.ask does by itself.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from edgechat.ui.eta import EtaEstimator

log = logging.getLogger(__name__)

EngineFactory = Callable[[Callable[[str], None]], Any]  # (status callback) -> Engine
ClientFactory = Callable[[str], Any]  # (model setting) -> (ChatClient, note)

PROGRESS_INTERVAL = 0.1  # seconds between progress signals
FILES_INTERVAL = 1.0  # seconds between file-list refreshes while indexing
MAX_WATCHED_DIRS = 4000
MAX_WATCHED_FILES = 4000


def describe(exc: BaseException) -> str:
    """One line a person can read."""
    msg = str(exc).strip()
    name = type(exc).__name__
    if not msg:
        return name
    return msg if name in ("RuntimeError", "OSError", "Exception", "LibraryLockedError") else f"{name}: {msg}"


def file_dict(rec: Any) -> dict[str, Any]:
    return {
        "path": rec.path,
        "root": rec.root,
        "state": rec.state,
        "problem": rec.problem or "",
        "detail": rec.detail or "",
        "title": rec.title or "",
        "format": rec.format or "",
        "pages": rec.pages or 0,
        "chunks": rec.chunks or 0,
    }


# ====================================================================== indexing


@dataclass
class IndexJob:
    kind: str  # "index" | "refresh" | "remove"
    paths: list[str] = field(default_factory=list)
    passwords: dict[str, str] = field(default_factory=dict)


class IndexWorker(QObject):
    sig_status = Signal(str)  # a line for the status bar (model download, ...)
    sig_engine_ready = Signal(object)  # the Engine, for the other workers (not for GUI calls)
    sig_engine_failed = Signal(str, str)  # kind ("locked" | "error"), message
    sig_job_started = Signal(str, list)  # kind, paths
    sig_progress = Signal(dict)  # IndexProgress fields + eta, paused, elapsed
    sig_job_finished = Signal(str, dict)  # kind, summary (IndexSummary.to_dict() or {"removed": n})
    sig_job_failed = Signal(str, str)  # kind, message
    sig_files = Signal(list, list)  # roots, files (file_dict)
    sig_watch = Signal(list, list)  # directories, files to watch
    sig_idle = Signal()

    _wake = Signal()
    _open = Signal()

    def __init__(self, engine_factory: EngineFactory) -> None:
        super().__init__()
        self._factory = engine_factory
        self.engine: Any = None
        self._lock = threading.Lock()
        self._jobs: deque[IndexJob] = deque()
        self._cancel = threading.Event()
        self._closing = threading.Event()
        self.busy = False
        self.chunk_settings: Any = None
        self._wake.connect(self._drain)
        self._open.connect(self.open)

    # ---------------------------------------------------------------- from the GUI thread

    def request_open(self) -> None:
        """Create the Engine in the worker thread (queued)."""
        self._open.emit()

    def submit(self, job: IndexJob) -> None:
        """Queue a job (thread-safe). Refreshes and re-indexes of the same folders coalesce."""
        with self._lock:
            if job.kind == "refresh":
                same = next((q for q in self._jobs if q.kind == "refresh"), None)
                if same is None:
                    self._jobs.append(job)
                else:
                    same.passwords.update(job.passwords)
            elif job.kind == "index":
                wanted = {os.path.normcase(p) for p in job.paths}
                same = next((q for q in self._jobs if q.kind == "index"
                             and wanted <= {os.path.normcase(p) for p in q.paths}), None)
                if same is None:
                    self._jobs.append(job)
                else:
                    same.passwords.update(job.passwords)
            elif job.kind == "remove":
                # Indexing a folder that is about to be removed is wasted work.
                removed = {os.path.normcase(p) for p in job.paths}
                kept: deque[IndexJob] = deque()
                for queued in self._jobs:
                    if queued.kind == "index":
                        queued.paths = [p for p in queued.paths if os.path.normcase(p) not in removed]
                        if not queued.paths:
                            continue
                    kept.append(queued)
                self._jobs = kept
                self._jobs.append(job)
            else:
                raise ValueError(f"unknown job kind {job.kind}")
        self._wake.emit()

    def cancel(self) -> None:
        """Stop the running index job between batches and drop queued ones (thread-safe).
        Queued removals still run: the user asked for them."""
        with self._lock:
            self._jobs = deque(j for j in self._jobs if j.kind == "remove")
        self._cancel.set()

    def stop(self) -> None:
        self._closing.set()
        with self._lock:
            self._jobs.clear()
        self._cancel.set()

    def pending(self) -> int:
        with self._lock:
            return len(self._jobs)

    # ---------------------------------------------------------------- in the worker thread

    @Slot()
    def open(self) -> None:
        try:
            engine = self._factory(self.sig_status.emit)
            # Chroma is opened here, off the GUI thread and before anyone else touches it.
            _ = engine.store.collection
            self.engine = engine
        except Exception as e:  # noqa: BLE001 - reported to the UI
            from edgechat.core.store import LibraryLockedError

            kind = "locked" if isinstance(e, LibraryLockedError) else "error"
            if kind == "error":
                log.exception("the library could not be opened")
            self.sig_engine_failed.emit(kind, describe(e))
            return
        self.sig_engine_ready.emit(engine)
        self._emit_files()
        self._emit_watch()

    @Slot()
    def _drain(self) -> None:
        if self.engine is None:
            return
        while not self._closing.is_set():
            with self._lock:
                if not self._jobs:
                    break
                job = self._jobs.popleft()
                self._cancel.clear()
                self.busy = True
            try:
                self._run(job)
            except Exception as e:  # noqa: BLE001 - reported to the UI
                log.exception("index job %s failed", job.kind)
                self.sig_job_failed.emit(job.kind, describe(e))
            try:
                if not self._closing.is_set():
                    self._emit_files()
                    self._emit_watch()
            finally:
                self.busy = False
        if not self._closing.is_set():
            self.sig_idle.emit()

    def _run(self, job: IndexJob) -> None:
        engine = self.engine
        self.sig_job_started.emit(job.kind, list(job.paths))
        if self.chunk_settings is not None:
            engine.chunk_settings = self.chunk_settings
        if job.kind == "remove":
            removed = 0
            for p in job.paths:
                removed += engine.remove(p)
            self.sig_job_finished.emit("remove", {"removed": removed, "paths": list(job.paths)})
            return
        eta = EtaEstimator()
        t0 = time.monotonic()
        last = [0.0, 0.0, -1]  # last progress signal, last file list, files_done at that list

        def progress(p: Any) -> None:
            now = time.monotonic()
            final = p.phase in ("finished", "cancelled", "scanning")
            if not final and now - last[0] < PROGRESS_INTERVAL:
                return
            last[0] = now
            data = {
                "phase": p.phase,
                "files_done": p.files_done,
                "files_total": p.files_total,
                "chunks_done": p.chunks_done,
                "chunks_total": p.chunks_total,
                "bytes_done": p.bytes_done,
                "bytes_total": p.bytes_total,
                "current": p.current,
                "elapsed": now - t0,
                "eta": eta.update(p.bytes_done, p.bytes_total, p.chunks_done, p.chunks_total, now),
                "paused": engine.answering.is_set(),
            }
            self.sig_progress.emit(data)
            if p.files_done != last[2] and now - last[1] >= FILES_INTERVAL:
                last[1], last[2] = now, p.files_done
                self._emit_files()

        if job.kind == "refresh":
            summary = engine.refresh(progress=progress, cancel=self._cancel, passwords=job.passwords or None)
        else:
            summary = engine.index(job.paths, progress=progress, cancel=self._cancel, passwords=job.passwords or None)
        result = summary.to_dict()
        result["paths"] = list(job.paths)
        self.sig_job_finished.emit(job.kind, result)

    def _emit_files(self) -> None:
        try:
            store = self.engine.store
            roots = store.roots()
            files = [file_dict(f) for f in store.files()]
        except Exception as e:  # noqa: BLE001
            log.exception("listing the library failed")
            self.sig_job_failed.emit("list", describe(e))
            return
        self.sig_files.emit(roots, files)

    def _emit_watch(self) -> None:
        try:
            roots = self.engine.store.roots()
            dirs: list[str] = []
            files: list[str] = []
            for root in roots:
                r = Path(root)
                if r.is_file():
                    files.append(root)
                    dirs.append(str(r.parent))
                    continue
                if not r.is_dir():
                    continue
                for dirpath, dirnames, filenames in os.walk(r):
                    dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in
                                         ("__pycache__", "node_modules"))
                    if len(dirs) < MAX_WATCHED_DIRS:
                        dirs.append(dirpath)
                    for name in filenames:
                        if len(files) < MAX_WATCHED_FILES and not name.startswith("."):
                            files.append(os.path.join(dirpath, name))
                    if len(dirs) >= MAX_WATCHED_DIRS and len(files) >= MAX_WATCHED_FILES:
                        break
        except Exception:  # noqa: BLE001 - watching is a convenience; never fatal
            log.exception("listing folders to watch failed")
            return
        self.sig_watch.emit(dirs, files)


# ====================================================================== answering


def default_client_factory(setting: str, embedder: Any = None) -> tuple[Any, str]:
    """The chat client for a model setting ("" = the active model, "extractive", or a model
    name) and a note for the user when it is not what was asked for.

    With no model marked active but some installed, the first installed one is used (without
    changing which is marked active: that stays the user's choice, in Settings or the CLI)."""
    from edgechat.core.extractive import ExtractiveClient

    def extractive() -> Any:
        try:
            return ExtractiveClient(embedder)
        except TypeError:  # an ExtractiveClient that takes no embedder
            return ExtractiveClient()

    if setting == "extractive":
        return extractive(), ""
    try:
        from edgechat.core.llm import manager
    except ImportError:
        return extractive(), "No language model support is installed: answers quote your documents."
    try:
        if setting:
            active = manager.active_model()
            if active is None or getattr(active, "name", None) != setting:
                manager.use_model(setting)
        client = manager.load_active_client()
        if client is None:
            installed = manager.list_models()
            if installed:
                from edgechat.core.llm.genai_client import GenaiChatClient

                first = installed[0]
                client = GenaiChatClient(first.path, name=first.name)
    except Exception as e:  # noqa: BLE001 - a broken model must not stop answering
        log.warning("the language model could not be loaded: %s", e)
        return extractive(), f"The language model could not be loaded ({describe(e)}): answers quote your documents."
    if client is None:
        return extractive(), "No language model is installed: answers quote your documents."
    return client, ""


class AnswerWorker(QObject):
    sig_delta = Signal(int, str)  # request id, text to append
    sig_done = Signal(int, object)  # request id, ChatResponse (plain data)
    sig_failed = Signal(int, str)  # request id, message
    sig_status = Signal(int, str)  # request id, "Loading the language model…"
    sig_client = Signal(dict)  # {"name", "extractive", "note"}
    sig_models = Signal(list, str)  # [(name, label)] installed language models, the active one

    _ask = Signal(int, dict)
    _probe = Signal()
    _set_model = Signal(str)
    _set_engine = Signal(object)

    DELTA_INTERVAL = 0.03

    def __init__(self, client_factory: ClientFactory = default_client_factory) -> None:
        super().__init__()
        self._client_factory = client_factory
        self.engine: Any = None
        self._client: Any = None
        self._model_setting = ""
        self._lock = threading.Lock()
        self._events: dict[int, threading.Event] = {}
        self._ask.connect(self._run)
        self._set_model.connect(self._apply_model)
        self._set_engine.connect(self._apply_engine)
        self._probe.connect(self._do_probe)

    # ---------------------------------------------------------------- from the GUI thread

    def set_engine(self, engine: Any) -> None:
        self._set_engine.emit(engine)

    def probe_models(self) -> None:
        """List the installed language models in the worker thread (sig_models)."""
        self._probe.emit()

    def set_model(self, setting: str) -> None:
        self._set_model.emit(setting)

    def submit(self, request_id: int, payload: dict) -> None:
        """Ask: cancels every earlier request, then queues this one (thread-safe)."""
        with self._lock:
            for event in self._events.values():
                event.set()
            self._events[request_id] = threading.Event()
        self._ask.emit(request_id, payload)

    def cancel(self, request_id: int | None = None) -> None:
        """Stop one request (or all): the client stops within one token (thread-safe)."""
        with self._lock:
            for rid, event in self._events.items():
                if request_id is None or rid == request_id:
                    event.set()

    # ---------------------------------------------------------------- in the worker thread

    @Slot(object)
    def _apply_engine(self, engine: Any) -> None:
        self.engine = engine

    @Slot()
    def _do_probe(self) -> None:
        from edgechat.ui.settings import installed_models

        models, active = installed_models()
        self.sig_models.emit(models, active)

    @Slot(str)
    def _apply_model(self, setting: str) -> None:
        if setting != self._model_setting or self._client is None:
            self._model_setting = setting
            self._client = None  # loaded on the next question

    def _ensure_client(self, request_id: int) -> Any:
        if self._client is None:
            if self._model_setting != "extractive":
                self.sig_status.emit(request_id, "Loading the language model…")
            try:
                client, note = self._make_client()
            except Exception as e:  # noqa: BLE001
                from edgechat.core.extractive import ExtractiveClient

                log.exception("loading the chat client failed")
                client, note = ExtractiveClient(), f"The language model could not be loaded ({describe(e)})."
            self._client = client
            self.sig_client.emit({"name": getattr(client, "name", "?"),
                                  "extractive": getattr(client, "name", "") == "extractive", "note": note})
        return self._client

    def _make_client(self) -> tuple[Any, str]:
        """The factory gets the engine's embedder when it takes one (the extractive answerer
        uses it to weigh meaning as well as shared words)."""
        import inspect

        try:
            takes_embedder = "embedder" in inspect.signature(self._client_factory).parameters
        except (TypeError, ValueError):
            takes_embedder = False
        if takes_embedder and self.engine is not None:
            return self._client_factory(self._model_setting, embedder=self.engine.embedder)
        return self._client_factory(self._model_setting)

    @Slot(int, dict)
    def _run(self, request_id: int, payload: dict) -> None:
        with self._lock:
            cancel = self._events.get(request_id)
        if cancel is None or cancel.is_set():
            self._forget(request_id)
            return
        try:
            if self.engine is None:
                raise RuntimeError("the library is not open yet")
            from edgechat.core.records import ChatMessage, ChatOptions, RagRequest, Role, Scope

            history = [ChatMessage(Role(r), c) for r, c in payload.get("history", [])]
            scope = payload.get("scope")
            request = RagRequest(
                query=payload["query"],
                max_results=int(payload.get("max_results", 5)),
                recent_messages=history[-6:],
                scope=Scope(*scope) if scope else None,
            )
            options = ChatOptions(
                temperature=float(payload.get("temperature", 0.0)),
                max_new_tokens=int(payload.get("max_new_tokens", 384)),
            )
            client = self._ensure_client(request_id)
            if cancel.is_set():
                return
            pending = ""
            last = time.monotonic()
            response = None
            for upd in self.engine.ask(request, history=history, options=options, cancel=cancel, client=client):
                if upd.delta:
                    pending += upd.delta
                    now = time.monotonic()
                    if now - last >= self.DELTA_INTERVAL and not cancel.is_set():
                        self.sig_delta.emit(request_id, pending)
                        pending, last = "", now
                if upd.done:
                    response = upd.response
            if pending and not cancel.is_set():
                self.sig_delta.emit(request_id, pending)
            if response is None:
                raise RuntimeError("the answer ended without a result")
            if cancel.is_set() and response.stop_reason == "eos":
                response.stop_reason = "cancelled"
            self.sig_done.emit(request_id, response)
        except Exception as e:  # noqa: BLE001 - reported to the UI
            log.exception("answering failed")
            self.sig_failed.emit(request_id, describe(e))
        finally:
            self._forget(request_id)

    def _forget(self, request_id: int) -> None:
        with self._lock:
            self._events.pop(request_id, None)


# ====================================================================== documents


class DocumentWorker(QObject):
    """Prepares a cited document for the viewer, off the GUI thread: whether the file is still
    the one that was indexed (stat, then sha256 if the stat changed), the cited passage's text
    (from the answer, or from the store for a saved chat) and, for formats other than PDF, the
    document's text parsed exactly as the indexer parsed it."""

    sig_loaded = Signal(int, dict)
    _load = Signal(int, dict)
    _set_engine = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.engine: Any = None
        self._latest = 0
        self._lock = threading.Lock()
        self._cache_key: tuple | None = None
        self._cache: tuple[list[str], str] = ([], "")
        self._pdf: Any = None  # a QPdfDocument owned by this thread
        self._pdf_key: tuple | None = None
        self._load.connect(self._run)
        self._set_engine.connect(self._apply_engine)

    def set_engine(self, engine: Any) -> None:
        self._set_engine.emit(engine)

    def submit(self, request_id: int, source: dict) -> None:
        with self._lock:
            self._latest = request_id
        self._load.emit(request_id, source)

    @Slot(object)
    def _apply_engine(self, engine: Any) -> None:
        self.engine = engine

    @Slot(int, dict)
    def _run(self, request_id: int, source: dict) -> None:
        with self._lock:
            if request_id != self._latest:
                return  # a newer request supersedes this one
        try:
            result = self.inspect(source)
        except Exception as e:  # noqa: BLE001
            log.exception("preparing %s for the viewer failed", source.get("path"))
            result = {"status": "error", "message": describe(e)}
        result.setdefault("path", source.get("path", ""))
        self.sig_loaded.emit(request_id, result)

    def inspect(self, source: dict) -> dict:
        from edgechat.core.indexer import sha256_file

        path = str(source.get("path") or "")
        out: dict[str, Any] = {"path": path, "page": int(source.get("page") or 1),
                               "start": int(source.get("start") or 0), "end": int(source.get("end") or 0)}
        if not path or not os.path.isfile(path):
            out.update(status="missing", message=f"The file is no longer at {path}: it was moved or deleted "
                                                  "since it was indexed, so the passage cannot be shown.")
            return out
        store = self.engine.store if self.engine is not None else None
        rec = store.file(path) if store is not None else None
        st = os.stat(path)
        changed = False
        if rec is None or rec.state != "done":
            changed = True
        elif not (rec.size == st.st_size and rec.mtime == st.st_mtime):
            changed = rec.sha256 != sha256_file(path)
        text = source.get("content") or ""
        chunk_id = source.get("chunk_id") or ""
        if not text and chunk_id and store is not None:
            rows = store.chunk_rows([chunk_id])
            if chunk_id in rows:
                text = rows[chunk_id].text
            else:
                changed = True  # the chunk is gone: the file was indexed again since
        out["chunk_text"] = text
        suffix = Path(path).suffix.lower()
        out["format"] = "pdf" if suffix == ".pdf" else (rec.format if rec and rec.format else "text")
        if changed:
            out.update(status="changed", message="This file changed since it was indexed, so the cited passage "
                                                 "cannot be placed reliably. Re-index the library to cite it again.")
        else:
            out["status"] = "ok"
        if out["format"] == "pdf":
            out.update(self._place_in_pdf(path, (st.st_mtime, st.st_size), out["page"], text if not changed else ""))
            return out
        from edgechat.core.records import DocumentError

        try:
            pages, title = self._parsed(path, st.st_mtime, st.st_size)
        except DocumentError as e:
            out.update(status="error", message=f"The file cannot be read any more: {e}")
            return out
        out["pages"] = pages
        out["title"] = title
        return out

    def _parsed(self, path: str, mtime: float, size: int) -> tuple[list[str], str]:
        """The document's page texts, parsed as the indexer parses them (the last one cached)."""
        key = (path, mtime, size)
        if self._cache_key != key:
            from edgechat.core.documents import parse_document

            doc = parse_document(path)
            self._cache = ([p.text for p in doc.pages], doc.title)
            self._cache_key = key
        return self._cache

    def _place_in_pdf(self, path: str, stamp: tuple, page: int, passage: str) -> dict:
        """QtPdf's own outline of the passage on its page, computed here rather than in the
        GUI thread (page text extraction takes tens of milliseconds on big pages). QtPdf
        serialises its use of pdfium internally, so a worker-owned QPdfDocument is safe."""
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


# ====================================================================== the threads


class Workers(QObject):
    """Owns the worker threads. Create, connect to the workers' signals, then start()."""

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
        engine = self.engine or self.index.engine
        if engine is not None and ok:
            try:
                engine.close()
            except Exception:  # noqa: BLE001
                log.exception("closing the library failed")
        return ok
