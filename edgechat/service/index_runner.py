"""Index work, one job at a time: opens the library, then runs index / refresh / remove jobs
and reports them as protocol events (edgechat.service.protocol).

`submit`, `cancel`, `stop` and `pending` may be called from any thread; `open` and `drain` run
on the hosting thread (edgechat.service.host in the app, edgechat.ui.workers in tests).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from edgechat.core.engine import ChunkSettings, Engine, IndexProgress, LibraryLockedError, describe_error
from edgechat.core.records import IndexPhase
from edgechat.service.eta import EtaEstimator
from edgechat.service.protocol import (
    EngineFailed,
    EngineReady,
    Event,
    FailureKind,
    Idle,
    IndexJob,
    JobFailed,
    JobFinished,
    JobKind,
    JobStarted,
    JobSummary,
    LibraryListing,
    Progress,
    QueueState,
    Status,
    WatchList,
)

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]
EngineFactory = Callable[[Callable[[str], None]], Engine]  # (status line callback) -> Engine

PROGRESS_INTERVAL = 0.1  # seconds between progress events
FILES_INTERVAL = 1.0  # seconds between file-list refreshes while indexing


def default_engine_factory(library: str | Path) -> EngineFactory:
    def make(status: Callable[[str], None]) -> Engine:
        return Engine(library, embedder_progress=status)

    return make


def _key(path: str) -> str:
    return os.path.normcase(path)


class IndexRunner:
    def __init__(self, engine_factory: EngineFactory, emit: Emit, wake: Callable[[], None],
                 on_ready: Callable[[Engine], None] = lambda engine: None) -> None:
        """`wake` asks the hosting thread to call drain(); `on_ready` hands the open Engine to the
        host's other threads before EngineReady is sent."""
        self._factory = engine_factory
        self.emit = emit
        self.wake = wake
        self._on_ready = on_ready
        self.engine: Engine | None = None
        self._lock = threading.Lock()
        self._jobs: deque[IndexJob] = deque()
        self._cancel = threading.Event()
        self._closing = threading.Event()
        self._chunk_settings: ChunkSettings | None = None
        self.busy = False

    # ---------------------------------------------------------------- any thread

    def submit(self, job: IndexJob) -> None:
        """Queue a job. Refreshes coalesce, and so do re-indexes of folders already queued."""
        with self._lock:
            if job.kind in (JobKind.REFRESH, JobKind.LIST):
                same = next((q for q in self._jobs if q.kind == job.kind), None)
            elif job.kind == JobKind.INDEX:
                wanted = {_key(p) for p in job.paths}
                same = next((q for q in self._jobs if q.kind == JobKind.INDEX and q.readers == job.readers
                             and wanted <= {_key(p) for p in q.paths}), None)
            elif job.kind == JobKind.REMOVE:
                # Indexing a folder that is about to be removed is wasted work.
                removed = {_key(p) for p in job.paths}
                kept: deque[IndexJob] = deque()
                for queued in self._jobs:
                    if queued.kind == JobKind.INDEX:
                        queued.paths = [p for p in queued.paths if _key(p) not in removed]
                        if not queued.paths:
                            continue
                    kept.append(queued)
                self._jobs = kept
                same = None
            else:
                raise ValueError(f"unknown job kind {job.kind}")
            if same is None:
                self._jobs.append(job)
            else:
                same.passwords.update(job.passwords)
        self._state()
        self.wake()

    def cancel(self) -> None:
        """Stop the running job between batches and drop queued ones. Queued removals still
        run: the user asked for them."""
        with self._lock:
            self._jobs = deque(j for j in self._jobs if j.kind == JobKind.REMOVE)
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

    def set_chunk_settings(self, settings: ChunkSettings) -> None:
        """Used from the next job on (a job in flight keeps the settings it started with)."""
        self._chunk_settings = settings
        if self.engine is not None:
            self.engine.chunk_settings = settings

    def _state(self) -> None:
        self.emit(QueueState(self.busy, self.pending()))

    # ---------------------------------------------------------------- the hosting thread

    def open(self) -> Engine | None:
        try:
            engine = self._factory(lambda text: self.emit(Status(text)))
            engine.open()  # the vector index loads here, before the first question
        except Exception as e:  # noqa: BLE001 - reported to the window
            locked = isinstance(e, LibraryLockedError)
            if not locked:
                log.exception("the library could not be opened")
            self.emit(EngineFailed(FailureKind.LOCKED if locked else FailureKind.ERROR, describe_error(e)))
            return None
        if self._chunk_settings is not None:
            engine.chunk_settings = self._chunk_settings
        self.engine = engine
        self._on_ready(engine)
        self.emit(EngineReady())
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
                self._run(self.engine, job)
            except Exception as e:  # noqa: BLE001 - reported to the window
                log.exception("index job %s failed", job.kind)
                self.emit(JobFailed(job.kind, describe_error(e)))
            try:
                if not self._closing.is_set():
                    self.emit_files()
                    self.emit_watch()
            finally:
                self.busy = False
                self._state()
        if not self._closing.is_set():
            self.emit(Idle())

    def _run(self, engine: Engine, job: IndexJob) -> None:
        if job.kind == JobKind.LIST:
            return  # the listing that follows every job is the work
        paths = tuple(job.paths)
        self.emit(JobStarted(job.kind, paths))
        if job.kind == JobKind.REMOVE:
            removed = sum(engine.remove(p) for p in job.paths)
            self.emit(JobFinished(job.kind, JobSummary(removed=removed, paths=paths)))
            return
        eta = EtaEstimator()
        t0 = time.monotonic()
        last = [0.0, 0.0, -1]  # last progress event, last file list, files_done at that list

        def progress(p: IndexProgress) -> None:
            now = time.monotonic()
            final = p.phase in (IndexPhase.FINISHED, IndexPhase.CANCELLED, IndexPhase.SCANNING)
            if not final and now - last[0] < PROGRESS_INTERVAL:
                return
            last[0] = now
            self.emit(Progress(
                phase=p.phase, files_done=p.files_done, files_total=p.files_total,
                chunks_done=p.chunks_done, chunks_total=p.chunks_total, bytes_done=p.bytes_done,
                bytes_total=p.bytes_total, current=p.current, elapsed=now - t0,
                eta=eta.update(p.bytes_done, p.bytes_total, p.chunks_done, p.chunks_total, now),
                paused=engine.answering_now,
                ocr_file=p.ocr_file, ocr_done=p.ocr_done, ocr_total=p.ocr_total,
            ))
            if p.files_done != last[2] and now - last[1] >= FILES_INTERVAL:
                last[1], last[2] = now, p.files_done
                self.emit_files()

        passwords = job.passwords or None
        if job.kind == JobKind.REFRESH:
            s = engine.refresh(progress=progress, cancel=self._cancel, passwords=passwords)
        else:
            s = engine.index(job.paths, progress=progress, cancel=self._cancel, passwords=passwords,
                             readers=job.readers)
        self.emit(JobFinished(job.kind, JobSummary(
            indexed=len(s.indexed), unchanged=s.unchanged, removed=len(s.removed), failed=len(s.failed),
            offline=tuple(s.offline),
            chunks_added=s.chunks_added, seconds=round(s.seconds, 3), cancelled=s.cancelled, paths=paths)))

    def emit_files(self) -> None:
        if self.engine is None:
            return
        try:
            listing = LibraryListing(tuple(self.engine.roots()), tuple(self.engine.files()),
                                     tuple(self.engine.offline_roots()), tuple(self.engine.shared_roots()))
        except Exception as e:  # noqa: BLE001 - reported to the window
            log.exception("listing the library failed")
            self.emit(JobFailed(JobKind.LIST, describe_error(e)))
            return
        self.emit(listing)

    def emit_watch(self) -> None:
        if self.engine is None:
            return
        try:
            dirs, files = self.engine.watch_list()
        except Exception:  # noqa: BLE001 - watching is a convenience; never fatal
            log.exception("listing folders to watch failed")
            return
        self.emit(WatchList(tuple(dirs), tuple(files)))

    def close_engine(self) -> None:
        if self.engine is not None:
            try:
                self.engine.close()
            except Exception:  # noqa: BLE001 - the library is being let go: logged, never fatal
                log.exception("closing the library failed")
            self.engine = None
