"""The work the app hands to the core, with no Qt: indexing jobs, answers, and what the viewer
needs to know about a cited file.

The same runners are hosted two ways (edgechat.ui.workers and edgechat.service.host):
on QThreads inside the app's process (tests, and whenever factories are injected), or on plain
threads in a separate engine process (the app), because some C extensions the core uses hold
the GIL for long stretches (Chroma's upsert, a language model's prompt prefill) and no thread
arrangement keeps the GUI thread responsive through that.

A runner reports through `emit(name, *args)` with plain data only (dicts, lists, str, numbers
and the core's own records); every exception becomes a failure event with a readable message.
Answering has priority over indexing for the CPU: engine.ask sets `engine.answering`, and the
indexer pauses between batches while it is set.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from edgechat.service.eta import EtaEstimator

log = logging.getLogger(__name__)

Emit = Callable[..., None]  # emit(event_name, *args)
EngineFactory = Callable[[Callable[[str], None]], Any]  # (status callback) -> Engine
ClientFactory = Callable[..., Any]  # (model setting[, embedder=...]) -> (ChatClient, note)

PROGRESS_INTERVAL = 0.1  # seconds between progress events
FILES_INTERVAL = 1.0  # seconds between file-list refreshes while indexing
DELTA_INTERVAL = 0.03  # seconds over which streamed text is gathered into one event
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


def default_engine_factory(library: Path) -> EngineFactory:
    def make(status: Callable[[str], None]) -> Any:
        from edgechat.core.engine import Engine

        return Engine(library, embedder_progress=status)

    return make


# ====================================================================== indexing


@dataclass
class IndexJob:
    kind: str  # "index" | "refresh" | "remove"
    paths: list[str] = field(default_factory=list)
    passwords: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class IndexRunner:
    """Opens the Engine, then runs index / refresh / remove jobs one at a time.

    Events: status(str), engine_ready(engine), engine_failed(kind, message), job_started(kind,
    paths), progress(dict), job_finished(kind, dict), job_failed(kind, message), files(roots,
    files), watch(dirs, files), idle(), state(busy, pending)."""

    def __init__(self, engine_factory: EngineFactory, emit: Emit, wake: Callable[[], None]) -> None:
        self._factory = engine_factory
        self.emit = emit
        self.wake = wake  # asks the hosting thread to call drain()
        self.engine: Any = None
        self._lock = threading.Lock()
        self._jobs: deque[IndexJob] = deque()
        self._cancel = threading.Event()
        self._closing = threading.Event()
        self.busy = False
        self.chunk_settings: Any = None

    # ---------------------------------------------------------------- any thread

    def submit(self, job: IndexJob) -> None:
        """Queue a job. Refreshes coalesce, and so do re-indexes of folders already queued."""
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
        self._state()
        self.wake()

    def cancel(self) -> None:
        """Stop the running job between batches and drop queued ones. Queued removals still
        run: the user asked for them."""
        with self._lock:
            self._jobs = deque(j for j in self._jobs if j.kind == "remove")
        self._cancel.set()
        self._state()

    def stop(self) -> None:
        self._closing.set()
        with self._lock:
            self._jobs.clear()
        self._cancel.set()

    def pending(self) -> int:
        with self._lock:
            return len(self._jobs)

    def _state(self) -> None:
        self.emit("state", self.busy, self.pending())

    # ---------------------------------------------------------------- the hosting thread

    def open(self) -> Any:
        try:
            engine = self._factory(lambda text: self.emit("status", text))
            _ = engine.store.collection  # Chroma opens here, before anyone else touches it
            self.engine = engine
        except Exception as e:  # noqa: BLE001 - reported to the UI
            from edgechat.core.store.library import LibraryLockedError

            kind = "locked" if isinstance(e, LibraryLockedError) else "error"
            if kind == "error":
                log.exception("the library could not be opened")
            self.emit("engine_failed", kind, describe(e))
            return None
        self.emit("engine_ready", engine)
        self.emit_files()
        self.emit_watch()
        return engine

    def drain(self) -> None:
        if self.engine is None:
            return
        while not self._closing.is_set():
            with self._lock:
                if not self._jobs:
                    break
                job = self._jobs.popleft()
                self._cancel.clear()
                self.busy = True
            self._state()
            try:
                self._run(job)
            except Exception as e:  # noqa: BLE001 - reported to the UI
                log.exception("index job %s failed", job.kind)
                self.emit("job_failed", job.kind, describe(e))
            try:
                if not self._closing.is_set():
                    self.emit_files()
                    self.emit_watch()
            finally:
                self.busy = False
                self._state()
        if not self._closing.is_set():
            self.emit("idle")

    def _run(self, job: IndexJob) -> None:
        engine = self.engine
        self.emit("job_started", job.kind, list(job.paths))
        if self.chunk_settings is not None:
            engine.chunk_settings = self.chunk_settings
        if job.kind == "remove":
            removed = 0
            for p in job.paths:
                removed += engine.remove(p)
            self.emit("job_finished", "remove", {"removed": removed, "paths": list(job.paths)})
            return
        eta = EtaEstimator()
        t0 = time.monotonic()
        last = [0.0, 0.0, -1]  # last progress event, last file list, files_done at that list

        def progress(p: Any) -> None:
            now = time.monotonic()
            final = p.phase in ("finished", "cancelled", "scanning")
            if not final and now - last[0] < PROGRESS_INTERVAL:
                return
            last[0] = now
            self.emit("progress", {
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
            })
            if p.files_done != last[2] and now - last[1] >= FILES_INTERVAL:
                last[1], last[2] = now, p.files_done
                self.emit_files()

        passwords = job.passwords or None
        if job.kind == "refresh":
            summary = engine.refresh(progress=progress, cancel=self._cancel, passwords=passwords)
        else:
            summary = engine.index(job.paths, progress=progress, cancel=self._cancel, passwords=passwords)
        result = summary.to_dict()
        result["paths"] = list(job.paths)
        self.emit("job_finished", job.kind, result)

    def emit_files(self) -> None:
        try:
            store = self.engine.store
            roots = store.roots()
            files = [file_dict(f) for f in store.files()]
        except Exception as e:  # noqa: BLE001
            log.exception("listing the library failed")
            self.emit("job_failed", "list", describe(e))
            return
        self.emit("files", roots, files)

    def emit_watch(self) -> None:
        try:
            dirs: list[str] = []
            files: list[str] = []
            for root in self.engine.store.roots():
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
        self.emit("watch", dirs, files)

    def close_engine(self) -> None:
        if self.engine is not None:
            try:
                self.engine.close()
            except Exception:  # noqa: BLE001
                log.exception("closing the library failed")
            self.engine = None


# ====================================================================== answering


def installed_models() -> tuple[list[tuple[str, str]], str]:
    """[(name, label)] of installed language models and the active one's name; empty when the
    model manager is missing or fails (answers are then extractive)."""
    try:
        from edgechat.core.llm import manager
    except ImportError:
        return [], ""
    try:
        models = manager.list_models()
        active = manager.active_model()
    except Exception as e:  # noqa: BLE001 - a broken models folder must not break the app
        log.warning("listing language models failed: %s", e)
        return [], ""
    out = []
    for m in models:
        size = getattr(m, "size", 0) or 0
        precision = getattr(m, "precision", "") or ""
        label = m.name + (f" ({precision}, {size / 1e6:.0f} MB)" if size else "")
        out.append((m.name, label))
    return out, getattr(active, "name", "") if active else ""


def default_client_factory(setting: str, embedder: Any = None) -> tuple[Any, str]:
    """The chat client for a model setting ("" = the active model, "extractive", or a model
    name) and a note for the user when it is not what was asked for.

    With no model marked active but some installed, the first installed one is used (without
    changing which is marked active: that stays the user's choice, in Settings or the CLI)."""
    from edgechat.core.answering.extractive import ExtractiveClient

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


class AnswerRunner:
    """Streams answers for numbered requests. `register(rid)` (any thread) cancels every
    earlier request; `run(rid, payload)` (the answering thread) streams it.

    Events: delta(rid, text), done(rid, ChatResponse), failed(rid, message),
    answer_status(rid, text), client(dict), models(list, active)."""

    def __init__(self, client_factory: ClientFactory, emit: Emit) -> None:
        self._client_factory = client_factory
        self.emit = emit
        self.engine: Any = None
        self._client: Any = None
        self._model_setting = ""
        self._lock = threading.Lock()
        self._events: dict[int, threading.Event] = {}

    # ---------------------------------------------------------------- any thread

    def register(self, request_id: int) -> None:
        with self._lock:
            for event in self._events.values():
                event.set()
            self._events[request_id] = threading.Event()

    def cancel(self, request_id: int | None = None) -> None:
        with self._lock:
            for rid, event in self._events.items():
                if request_id is None or rid == request_id:
                    event.set()

    # ---------------------------------------------------------------- the answering thread

    def set_model(self, setting: str) -> None:
        if setting != self._model_setting or self._client is None:
            self._model_setting = setting
            self._client = None  # loaded on the next question

    def probe_models(self) -> None:
        models, active = installed_models()
        self.emit("models", models, active)

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

    def _ensure_client(self, request_id: int) -> Any:
        if self._client is None:
            if self._model_setting != "extractive":
                self.emit("answer_status", request_id, "Loading the language model…")
            try:
                client, note = self._make_client()
            except Exception as e:  # noqa: BLE001
                from edgechat.core.answering.extractive import ExtractiveClient

                log.exception("loading the chat client failed")
                client, note = ExtractiveClient(), f"The language model could not be loaded ({describe(e)})."
            self._client = client
            name = getattr(client, "name", "?")
            self.emit("client", {"name": name, "extractive": name == "extractive", "note": note})
        return self._client

    def run(self, request_id: int, payload: dict) -> None:
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
                    if now - last >= DELTA_INTERVAL and not cancel.is_set():
                        self.emit("delta", request_id, pending)
                        pending, last = "", now
                if upd.done:
                    response = upd.response
            if pending and not cancel.is_set():
                self.emit("delta", request_id, pending)
            if response is None:
                raise RuntimeError("the answer ended without a result")
            if cancel.is_set() and response.stop_reason == "eos":
                response.stop_reason = "cancelled"
            self.emit("done", request_id, response)
        except Exception as e:  # noqa: BLE001 - reported to the UI
            log.exception("answering failed")
            self.emit("failed", request_id, describe(e))
        finally:
            self._forget(request_id)

    def _forget(self, request_id: int) -> None:
        with self._lock:
            self._events.pop(request_id, None)


# ====================================================================== documents


class DocumentInspector:
    """What the source viewer needs to know about a cited file: whether it is still the one
    indexed (stat, then sha256 if the stat changed), the cited passage's text (from the answer,
    or from the store for a saved chat) and, for formats other than PDF, the document's text
    parsed exactly as the indexer parsed it (the last one cached)."""

    def __init__(self) -> None:
        self._cache_key: tuple | None = None
        self._cache: tuple[list[str], str] = ([], "")

    def inspect(self, engine: Any, source: dict) -> dict:
        try:
            return self._inspect(engine, source)
        except Exception as e:  # noqa: BLE001
            log.exception("preparing %s for the viewer failed", source.get("path"))
            return {"path": source.get("path", ""), "status": "error", "message": describe(e)}

    def _inspect(self, engine: Any, source: dict) -> dict:
        from edgechat.core.indexing.indexer import sha256_file

        path = str(source.get("path") or "")
        out: dict[str, Any] = {"path": path, "page": int(source.get("page") or 1),
                               "start": int(source.get("start") or 0), "end": int(source.get("end") or 0)}
        if not path or not os.path.isfile(path):
            out.update(status="missing", message=f"The file is no longer at {path}: it was moved or deleted "
                                                  "since it was indexed, so the passage cannot be shown.")
            return out
        store = engine.store if engine is not None else None
        rec = store.file(path) if store is not None else None
        st = os.stat(path)
        out["stamp"] = [st.st_mtime, st.st_size]
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
            return out  # placed by QtPdf in the app (edgechat.ui.workers.DocumentWorker)
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
        key = (path, mtime, size)
        if self._cache_key != key:
            from edgechat.core.documents import parse_document

            doc = parse_document(path)
            self._cache = ([p.text for p in doc.pages], doc.title)
            self._cache_key = key
        return self._cache
