"""Folder -> scan -> diff against the manifest -> parse -> chunk -> embed -> store.

Parsing runs one file ahead in a background thread while the embedder (which releases the GIL
inside onnxruntime) works on the previous file's chunks; chunks of small files are batched
together so the model always sees full batches. The parser itself runs in a child process
(parse_worker.py) so that a file over its time limit can be stopped and reported while the run
goes on. A file is written to the store only once all
its chunks are embedded, so cancelling or crashing never leaves a file half-indexed, and the
previous version of a changed file stays searchable until its new version is complete.

Chunking (and the chunks' context headers and tokens) happens in the parsing thread. Every store
write (a file's SQLite transaction with its FTS5 rows and its Chroma vectors, checkpoints,
failures) goes through a _StoreWriter: inline between batches by default, or, with
`write_in_background`, on a writer thread fed in order through a small queue, overlapping with
onnxruntime's Run. The writer keeps the order of the writes and stops at its first error, which
the run raises as it would have raised it inline (a full disk included). On 2 cores the writer
thread measured no faster (benchmarks.pipeline_overlap: the embedder is busier but embeds slower,
the CPU being the limit), so it is off by default.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgechat.core import documents
from edgechat.core.embedding.embedder import Embedder
from edgechat.core.fileio import sha256_file
from edgechat.core.indexing.chunking import CUT, ChunkSettings, chunk_document, chunk_document_parts
from edgechat.core.indexing.parse_worker import ParseCancelled, ParseLimit, ParseWorker, ParseWorkerUnavailable
from edgechat.core.indexing.scan import scan
from edgechat.core.records import Chunk, Document, DocumentError, FileState, IndexPhase, Problem
from edgechat.core.store import Store
from edgechat.core.store.diskfull import DiskFullError, disk_full_message, disk_full_reason
from edgechat.core.store.library import FileRecord, text_hash

log = logging.getLogger(__name__)

@dataclass
class IndexProgress:
    files_done: int
    files_total: int
    chunks_done: int
    chunks_total: int  # chunks known so far: grows as files are parsed
    bytes_done: int
    bytes_total: int
    current: str = ""
    phase: IndexPhase = IndexPhase.INDEXING
    # A scanned PDF being read by OCR (parsing runs a file ahead of `current`): its path and
    # pages read of pages to read; "" and 0 when none is.
    ocr_file: str = ""
    ocr_done: int = 0
    ocr_total: int = 0


@dataclass
class IndexSummary:
    indexed: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (path, problem, detail)
    chunks_added: int = 0
    pages_added: int = 0
    embedded: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    cancelled: bool = False
    recovered: list[str] = field(default_factory=list)
    offline: list[str] = field(default_factory=list)  # folders not there: their files are kept
    stale: list[str] = field(default_factory=list)  # failed now, last good version kept
    resumed_chunks: int = 0  # vectors an interrupted run had kept (not embedded again)

    def problem_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, problem, _ in self.failed:
            counts[problem] = counts.get(problem, 0) + 1
        return counts

    def to_dict(self) -> dict:
        return {
            "indexed": len(self.indexed),
            "unchanged": self.unchanged,
            "removed": len(self.removed),
            "failed": len(self.failed),
            "problems": self.problem_counts(),
            "failures": [{"path": p, "problem": pr, "detail": d} for p, pr, d in self.failed],
            "chunks_added": self.chunks_added,
            "pages_added": self.pages_added,
            "embedded": self.embedded,
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "cancelled": self.cancelled,
            "recovered": self.recovered,
            "offline": self.offline,
            "stale": self.stale,
            "resumed_chunks": self.resumed_chunks,
        }


@dataclass
class _Job:
    path: str
    root: str | None
    size: int
    mtime: float
    sha256: str


@dataclass
class _Parsed:
    """A file's chunks, or a part of them: `last` on its final part (see Indexer._parse)."""

    job: _Job
    doc: Document | None
    chunks: list[Chunk]
    error: DocumentError | None = None
    last: bool = True
    # the vectors an interrupted run kept for the file, read with its first part (Indexer._resume)
    kept: dict[int, tuple[str, Any]] = field(default_factory=dict)


class _StoreWriter:
    """The run's store writes, in the order submitted, on one thread (`background`) or inline.

    A write that fails stops the writer: the writes queued after it are dropped (their files
    are indexed again by the next run, as after a kill), and `check()` raises the error in the
    embedding thread. `done` holds what the writes finished, for the embedding thread to report
    (progress callbacks are called from the thread that runs the index, never from here)."""

    def __init__(self, background: bool, depth: int = 2) -> None:
        self.error: BaseException | None = None
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self._q: queue.Queue[Callable[[], object] | None] | None = None
        self._thread: threading.Thread | None = None
        if background:
            self._q = queue.Queue(maxsize=depth)
            self._thread = threading.Thread(target=self._loop, name="edgechat-store-writer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        assert self._q is not None
        while True:
            task = self._q.get()
            if task is None:
                return
            if self.error is not None:
                continue  # after a failure nothing more is written
            try:
                task()
            except BaseException as e:  # noqa: BLE001 - raised by the run's thread, which reports it
                log.debug("writing to the library failed", exc_info=True)
                self.error = e

    def submit(self, task: Callable[[], object]) -> None:
        self.check()
        if self._q is None:
            task()
            return
        while True:  # a full queue: wait for the writer, but not for a writer that failed
            try:
                self._q.put(task, timeout=0.1)
                return
            except queue.Full:
                self.check()

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        """Finish every write queued (or drop them after a failure) and stop the thread."""
        if self._q is None or self._thread is None:
            return
        self._q.put(None)
        self._thread.join()
        self._q = None


class _Parser:
    """An indexing run's parse thread: its files parsed and chunked ahead of the embedder, a few
    parts queued."""

    def __init__(self, items: Iterable[_Parsed], cancel: threading.Event) -> None:
        self._q: queue.Queue[_Parsed | None] = queue.Queue(maxsize=4)
        self._stop = threading.Event()
        self._cancel = cancel
        self.done = threading.Event()  # its last item is queued (or being queued)
        self._thread = threading.Thread(target=self._produce, args=(items,), name="edgechat-parse", daemon=True)
        self._thread.start()

    def _produce(self, items: Iterable[_Parsed]) -> None:
        try:
            for item in items:
                if self._cancel.is_set() or self._stop.is_set():
                    break
                self._q.put(item)
        except Exception:  # noqa: BLE001 - the parser thread never dies silently
            log.exception("parser thread failed")
        finally:
            self.done.set()
            self._q.put(None)

    def get(self, timeout: float) -> _Parsed | None:
        """The next part (None after the last); queue.Empty when none is ready within `timeout`."""
        return self._q.get(timeout=timeout)

    def close(self) -> None:
        """Stop parsing and wait for the thread (drained, so it can finish its put() and exit)."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._q.get(timeout=0.1)
            except queue.Empty:
                pass
        self._thread.join()


@dataclass
class _Work:
    """An indexing run's files between their parts being taken from the parser and their commit."""

    # per file taken: (its parts joined, its vectors so far, None where not yet embedded);
    # (None, []) once handed to the writer or dropped
    files: list[tuple[_Parsed | None, list]] = field(default_factory=list)
    open_pi: int | None = None  # the file whose next part is still being chunked
    buffer: list[tuple[int, int]] = field(default_factory=list)  # (file index, chunk index) to embed
    # (batch, its vectors' future), oldest first
    in_flight: deque[tuple[list[tuple[int, int]], Future]] = field(default_factory=deque)
    unsaved: dict[int, list[int]] = field(default_factory=dict)  # file index -> chunks embedded, not yet kept
    # file index -> chunks whose vectors were given to Store.put_vectors_ahead (only once nothing
    # is left to parse, so no file failing after its first parts has any)
    ahead: dict[int, set[int]] = field(default_factory=dict)
    busy_until: float = 0.0  # the end of the last embedding call taken: calls overlap, the time is counted once

    def take_part(self, item: _Parsed) -> tuple[int, int]:
        """A file's part: a new entry for a first part, the entry of the file being chunked
        extended for a later one. (file index, the part's first chunk index)."""
        if self.open_pi is None:
            self.files.append((item, [None] * len(item.chunks)))
            pi, first = len(self.files) - 1, 0
        else:
            pi = self.open_pi
            head, vectors = self.files[pi]
            assert head is not None and head.job is item.job
            first = len(vectors)
            head.chunks.extend(item.chunks)
            head.last = item.last
            vectors.extend([None] * len(item.chunks))
        self.open_pi = None if item.last else pi
        return pi, first

    def drop_open(self, state: IndexProgress) -> None:
        """The file being chunked failed after its first parts: they go, embedded or not."""
        if self.open_pi is None:
            return
        pi, self.open_pi = self.open_pi, None
        _, vectors = self.files[pi]
        state.chunks_total -= sum(1 for v in vectors if v is None)
        self.files[pi] = (None, [])
        self.buffer = [b for b in self.buffer if b[0] != pi]
        self.unsaved.pop(pi, None)

    def take_oldest(self, summary: IndexSummary, state: IndexProgress) -> None:
        """Wait for the oldest batch being embedded and keep its vectors with their files' chunks
        (a file that failed after its first parts were given has none left to keep)."""
        batch, future = self.in_flight.popleft()
        vecs, started, ended_at = future.result()
        summary.embed_seconds += max(0.0, ended_at - max(started, self.busy_until))
        self.busy_until = max(self.busy_until, ended_at)
        summary.embedded += len(batch)
        for (pi, ci), v in zip(batch, vecs):
            head, vectors = self.files[pi]
            if head is None:
                continue
            vectors[ci] = v
            self.unsaved.setdefault(pi, []).append(ci)
            state.chunks_done += 1


# A file with at least this many chunks keeps its vectors every CHECKPOINT_CHUNKS chunks embedded
# (a few seconds of embedding), so a run killed in the middle of it resumes there.
CHECKPOINT_CHUNKS = 128

# A file committed to SQLite is found by its words at once and by its meaning once its vectors
# are written, which waits for VECTOR_WRITE_BATCH of them (store/library.py), the end of the
# run, or at most this many seconds.
VECTOR_WRITE_DELAY_S = 10.0

# Once nothing is left to parse, the run's vectors go to the vector index as they are made, this
# many or more at a time (those of files still being embedded ahead of their commit: see
# Indexer._write_ahead), not all after the last batch.
FINAL_WRITE_BATCH = 64

# Batches given to the embedder at once. With one, its lanes idle at the end of every batch (the
# last text running alone) and while the indexer keeps the batch's vectors; with two, the next
# batch's texts are queued behind the last ones, and indexing is faster (benchmarks.pipeline_overlap
# "+one-batch" measures one against two).
EMBED_IN_FLIGHT = 2

# A file in one of these states whose size and mtime did not change needs nothing done.
UNCHANGED_STATES = (FileState.DONE, FileState.STALE, FileState.FAILED)


def is_offline(root: Path, holds_files: bool, added_file: bool = False) -> bool:
    """A library folder (or added file) that is not there now, while the library knows files in
    it: missing (an unplugged drive, an unmounted share, a renamed folder), an added file whose
    folder is gone too, or an empty mount point (a folder with nothing in it at all). Deleting
    every file of a folder by hand looks the same as the last case: taking the folder out of
    the library is then the user's explicit step."""
    if not holds_files:
        return False
    try:
        if root.is_file():
            return False
        if not root.exists():
            return not root.parent.is_dir() if added_file else True
        return root.is_dir() and next(iter(root.iterdir()), None) is None
    except OSError:  # a share that answers with an error is as good as gone
        return True


def cut_before(rec: FileRecord) -> bool:
    """A file the library holds as passages cut the way an older EdgeChat cut them
    (chunking.CUT): indexed again, its old passages searchable until the new ones replace them."""
    return rec.state == FileState.DONE and (rec.cut or 1) < CUT


class Indexer:
    # Store writes on a writer thread, overlapping with embedding (False: inline, between
    # batches). benchmarks.pipeline_overlap compares the two: no faster on 2 cores, so off.
    write_in_background = False

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        chunk_settings: ChunkSettings = ChunkSettings(),
        batch_size: int = 32,
        max_bytes: int = 200 * 1024 * 1024,
        passwords: dict[str, str] | None = None,
        yield_to: threading.Event | None = None,
        isolate_parsing: bool = True,
        parse_limit: ParseLimit | None = None,
        write_in_background: bool | None = None,
        parse_worker: ParseWorker | None = None,
    ) -> None:
        """`yield_to`: while this event is set (an answer is being written), indexing pauses
        between batches so answering gets the CPU. `isolate_parsing`: parse in a child process
        under `parse_limit` (default ParseLimit.from_env()); False parses in this process with
        no time limit. `write_in_background`: store writes on a writer thread (default: the
        class attribute, False). `parse_worker`: a child already started for this run (the
        engine keeps one ready, so a run does not wait for an interpreter and the parsers'
        imports); the caller closes it. None: the run starts its own and closes it."""
        if write_in_background is not None:
            self.write_in_background = write_in_background
        self.yield_to = yield_to
        self.isolate_parsing = isolate_parsing
        self.parse_limit = parse_limit or ParseLimit.from_env()
        self.parse_worker = parse_worker
        self.store = store
        self.embedder = embedder
        self.chunk_settings = chunk_settings
        self.batch_size = batch_size
        self.max_bytes = max_bytes
        self.passwords = dict(passwords or {})
        self._ocr_lock = threading.Lock()
        self._ocr_state: tuple[str, int, int] = ("", 0, 0)  # set by the parsing thread

    # ------------------------------------------------------------------ planning

    def _plan(self, roots: Sequence[Path], summary: IndexSummary) -> list[_Job]:
        jobs: list[_Job] = []
        seen: set[str] = set()
        for root in roots:
            root_s = str(root)
            known = {f.path: f for f in self.store.files(root=root_s)}
            if is_offline(root, bool(known), added_file=list(known) == [root_s]):
                # An unplugged drive or an unmounted share: nothing is removed (re-embedding a
                # large library takes hours); the folder is checked again when it is back.
                summary.offline.append(root_s)
                log.info("%s is offline: its %d files stay in the library", root_s, len(known))
                continue
            for p in scan(root):
                path = str(p)
                seen.add(path)
                try:
                    st = p.stat()
                except OSError as e:
                    summary.failed.append((path, Problem.UNREADABLE.value, str(e)))
                    continue
                rec = known.get(path) or self.store.file(path)
                recut = rec is not None and cut_before(rec)
                if rec and not recut and rec.size == st.st_size and rec.mtime == st.st_mtime and rec.state in UNCHANGED_STATES:
                    if not (rec.state == FileState.FAILED and path in self.passwords):
                        summary.unchanged += 1
                        continue
                if not documents.is_supported(p):
                    self.store.fail_file(path, root_s, st.st_size, st.st_mtime, None,
                                         Problem.UNSUPPORTED.value, f"'{p.suffix or p.name}' files are not read")
                    summary.failed.append((path, Problem.UNSUPPORTED.value, f"'{p.suffix or p.name}' files are not read"))
                    continue
                try:
                    digest = sha256_file(path)
                except OSError as e:
                    self.store.fail_file(path, root_s, st.st_size, st.st_mtime, None, Problem.UNREADABLE.value, str(e))
                    summary.failed.append((path, Problem.UNREADABLE.value, str(e)))
                    continue
                if rec and not recut and rec.sha256 == digest and rec.state in UNCHANGED_STATES and path not in self.passwords:
                    self.store.touch_file(path, st.st_size, st.st_mtime)
                    summary.unchanged += 1
                    continue
                jobs.append(_Job(path, root_s, st.st_size, st.st_mtime, digest))
            # The folder is here: a file it no longer holds was deleted or moved away.
            for path in known:
                if path not in seen:
                    self.store.remove_file(path)
                    summary.removed.append(path)
        return jobs

    # ------------------------------------------------------------------ parsing

    def _ocr_page_read(self, path: str) -> Callable[[int, int], None]:
        def read(done: int, total: int) -> None:
            with self._ocr_lock:
                self._ocr_state = (path, done, total)
        return read

    def _take_ocr(self, state: IndexProgress) -> bool:
        """Copy the OCR progress of the file being parsed into `state`; True if it changed."""
        with self._ocr_lock:
            path, done, total = self._ocr_state
        if (state.ocr_file, state.ocr_done, state.ocr_total) == (path, done, total):
            return False
        state.ocr_file, state.ocr_done, state.ocr_total = path, done, total
        return True

    def _parse(self, job: _Job, worker: ParseWorker | None = None,
               cancel: threading.Event | None = None) -> Iterator[_Parsed]:
        """The file's chunks in parts, as its pages are chunked (chunk_document_parts), so the
        embedder starts on a long document's first pages while the rest is chunked; or one
        part with the reason it cannot be indexed. An error may also follow parts with chunks
        (a chunking bug): the run then drops what it had of the file."""
        try:
            doc = self._read(job, worker, cancel)
            given = False
            for chunks, last in chunk_document_parts(doc, self.embedder.tokenizer, self.chunk_settings):
                if last and not given and not chunks:
                    raise DocumentError(Problem.NO_TEXT, "no text long enough to index")
                given = True
                yield _Parsed(job, doc, chunks, last=last)
        except DocumentError as e:
            yield _Parsed(job, None, [], e)
        except ParseCancelled:
            raise
        except Exception as e:  # noqa: BLE001 - a parser bug must not stop the run
            log.exception("unexpected failure parsing %s", job.path)
            yield _Parsed(job, None, [], DocumentError(Problem.MALFORMED, f"{type(e).__name__}: {e}"))

    def _read(self, job: _Job, worker: ParseWorker | None, cancel: threading.Event | None) -> Document:
        """The parsed file: in the parse worker when there is one, else here."""
        page_read = self._ocr_page_read(job.path)
        try:
            if worker is not None and worker.usable:
                try:
                    return worker.parse(job.path, size=job.size, password=self.passwords.get(job.path),
                                        max_bytes=self.max_bytes, cancel=cancel, ocr_progress=page_read)
                except ParseWorkerUnavailable:
                    pass  # logged once by the worker; parsed here instead
            from edgechat.core.documents import ocr

            ocr.set_progress(page_read)
            try:
                return documents.parse_document(job.path, password=self.passwords.get(job.path),
                                                max_bytes=self.max_bytes)
            finally:
                ocr.set_progress(None)
        finally:
            with self._ocr_lock:
                self._ocr_state = ("", 0, 0)

    # ------------------------------------------------------------------ the run

    def index(
        self,
        roots: Sequence[str | Path],
        *,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexSummary:
        """Index the folders (or files). Raises DiskFullError, saying so plainly, when the
        library's disk fills up: the run stops there, the files committed before stay."""
        try:
            return self._index(roots, progress, cancel)
        except DiskFullError:
            raise
        except Exception as e:  # noqa: BLE001 - any error is asked whether it is a full disk, else raised again
            reason = disk_full_reason(e, self.store.dir)
            if reason is None:
                raise
            log.error("indexing stopped, the disk is full: %s", reason)
            raise DiskFullError(disk_full_message(reason, self.store.dir)) from e

    def _index(
        self,
        roots: Sequence[str | Path],
        progress: Callable[[IndexProgress], None] | None,
        cancel: threading.Event | None,
    ) -> IndexSummary:
        t0 = time.perf_counter()
        cancel = cancel or threading.Event()
        summary = IndexSummary()
        summary.recovered = self.store.recover()
        roots_p = [Path(r).expanduser().resolve() for r in roots]
        for r in roots_p:
            if r.exists():
                self.store.add_root(str(r))
        report = progress or (lambda p: None)
        report(IndexProgress(0, 0, 0, 0, 0, 0, "", IndexPhase.SCANNING))
        jobs = self._plan(roots_p, summary)

        state = IndexProgress(0, len(jobs), 0, 0, 0, sum(j.size for j in jobs))
        worker = None
        if self.isolate_parsing and jobs:
            worker = self.parse_worker or ParseWorker()
            worker.limit = self.parse_limit
        opening = None
        if jobs and self.store.vectors is None:
            # Chroma's import and the collection's opening (0.7 CPU-s the first time in a
            # process) while the first file is parsed, not at its first commit, where the
            # embedder would wait for it. A failure here is met again, and raised, by the commit.
            opening = threading.Thread(target=self._open_vectors, name="edgechat-open-vectors", daemon=True)
            opening.start()
        try:
            if worker is not None:
                worker.start()  # a no-op for a worker started already

            def parsed() -> Iterable[_Parsed]:
                for job in jobs:
                    try:
                        yield from self._parse(job, worker, cancel)
                    except ParseCancelled:
                        return

            self._run(parsed(), state, summary, report, cancel)
        finally:
            if worker is not None and worker is not self.parse_worker:
                worker.close()
            if opening is not None:
                opening.join()  # never left opening the index of a library being closed
        summary.seconds = time.perf_counter() - t0
        return summary

    def _open_vectors(self) -> None:
        try:
            self.store.open_vectors()
        except Exception:  # noqa: BLE001 - the first commit opens it again and reports the error
            log.debug("opening the vector index ahead failed", exc_info=True)

    def add_documents(
        self,
        docs: Iterable[tuple[str, Document]],
        *,
        total: int = 0,
        progress: Callable[[IndexProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexSummary:
        """Index already-parsed documents under caller-chosen keys (evaluation sets, tests).

        A key stands where a path would; re-adding a key replaces that document."""
        t0 = time.perf_counter()
        summary = IndexSummary()
        summary.recovered = self.store.recover()

        def parsed() -> Iterable[_Parsed]:
            for key, doc in docs:
                digest = hashlib.sha256("\f".join(p.text for p in doc.pages).encode()).hexdigest()
                job = _Job(key, None, sum(len(p.text) for p in doc.pages), 0.0, digest)
                chunks = chunk_document(doc, self.embedder.tokenizer, self.chunk_settings)
                if not chunks:
                    yield _Parsed(job, None, [], DocumentError(Problem.NO_TEXT, "no text"))
                else:
                    yield _Parsed(job, doc, chunks)

        state = IndexProgress(0, total, 0, 0, 0, 0)
        self._run(parsed(), state, summary, progress or (lambda p: None), cancel or threading.Event())
        summary.seconds = time.perf_counter() - t0
        return summary

    def _run(
        self,
        items: Iterable[_Parsed],
        state: IndexProgress,
        summary: IndexSummary,
        report: Callable[[IndexProgress], None],
        cancel: threading.Event,
    ) -> None:
        parser = _Parser(items, cancel)
        writer = _StoreWriter(self.write_in_background)
        # The embedder's callers: threads started by this one, so at its CPU priority (the lanes
        # are chosen by their caller's).
        embedding = ThreadPoolExecutor(EMBED_IN_FLIGHT, thread_name_prefix="edgechat-embed")
        work = _Work()
        finished = ended = False
        flushed = time.monotonic()  # when the vector index was last written
        try:
            while not finished or work.buffer or work.in_flight:
                writer.check()
                self._report_written(writer, state, report)
                if cancel.is_set():
                    summary.cancelled = True
                    while work.in_flight:  # a cancel keeps what it did, the batches being embedded too
                        work.take_oldest(summary, state)
                    self._checkpoint(writer, work, force=True)
                    break
                if not finished:
                    finished = self._fill(work, parser, writer, summary, state, report, cancel)
                if cancel.is_set():
                    continue
                if work.buffer and len(work.in_flight) < EMBED_IN_FLIGHT:
                    while self.yield_to is not None and self.yield_to.is_set() and not cancel.is_set():
                        time.sleep(0.05)
                    batch, work.buffer = work.buffer[: self.batch_size], work.buffer[self.batch_size :]
                    chunks = [work.files[pi][0].chunks[ci] for pi, ci in batch]  # type: ignore[union-attr]
                    work.in_flight.append((batch, embedding.submit(self._embed, chunks)))
                    if len(work.in_flight) < EMBED_IN_FLIGHT:
                        continue  # another batch behind it, if the parser has its chunks ready
                if not work.in_flight:
                    continue
                work.take_oldest(summary, state)
                self._commit_ready(writer, work, summary)
                if finished:
                    self._write_ahead(writer, work)
                self._checkpoint(writer, work)
                if self.store.vectors_waiting and time.monotonic() - flushed > VECTOR_WRITE_DELAY_S:
                    writer.submit(self.store.flush_vectors)
                    flushed = time.monotonic()
                self._take_ocr(state)
                report(state)
            ended = True
        finally:
            embedding.shutdown(wait=True, cancel_futures=True)
            parser.close()
            writer.close()  # every write submitted is done (or dropped after a failure)
            try:  # the vectors of the files committed, a failed run's too
                self.store.drop_vectors_ahead()  # but not those of files that did not commit
                self.store.flush_vectors()
            except Exception:  # noqa: BLE001 - raised again unless the run failed first (that error wins)
                if ended and writer.error is None:
                    raise
                log.warning("writing the vector index after a failed run failed too", exc_info=True)
        writer.check()
        self._report_written(writer, state, report)
        state.phase = IndexPhase.CANCELLED if summary.cancelled else IndexPhase.FINISHED
        state.current = ""
        report(state)

    def _fill(self, work: _Work, parser: _Parser, writer: _StoreWriter, summary: IndexSummary,
              state: IndexProgress, report: Callable[[IndexProgress], None], cancel: threading.Event) -> bool:
        """Take the parser's parts until a batch is full or it has nothing ready; once it is done,
        all it made (the run's last stretch begins: _write_ahead). True after its last."""
        while len(work.buffer) < self.batch_size or parser.done.is_set():
            try:
                item = parser.get(timeout=0.0 if work.buffer or work.in_flight else 0.2)
            except queue.Empty:
                if work.buffer or work.in_flight or cancel.is_set():
                    return False
                if self._take_ocr(state):  # a scan's pages being read: say so
                    report(state)
                self._report_written(writer, state, report)
                continue
            if item is None:
                return True
            state.current = item.job.path
            if item.error is not None:
                work.drop_open(state)  # its first parts were given: they go too
                writer.submit(self._failure_task(writer, item, summary))
                continue
            state.chunks_total += len(item.chunks)
            pi, first = work.take_part(item)
            head, vectors = work.files[pi]
            assert head is not None
            resumed = self._resume(head, vectors, first)
            summary.resumed_chunks += resumed
            state.chunks_done += resumed
            work.buffer.extend((pi, ci) for ci in range(first, len(vectors)) if vectors[ci] is None)
            if item.last:
                self._commit_ready(writer, work, summary)  # (every vector kept by a killed run)
        return False

    def _embed(self, chunks: list[Chunk]) -> tuple[Any, float, float]:
        """The vectors of `chunks`, with when the call started and ended (perf_counter). An
        embedder that takes token ids is given those the chunker has (their pages' encodings): the
        same vectors, without tokenizing most texts a second time (the R manuals: 727 of 814
        chunks; tokenizing 0.03 CPU-s instead of 0.29, against 19 CPU-s of embedding;
        benchmarks.indexer_overhead, token_reuse)."""
        started = time.perf_counter()
        texts = [c.embed_text for c in chunks]
        encoded = getattr(self.embedder, "embed_encoded", None)
        vectors = encoded(texts, [c.embed_ids for c in chunks]) if encoded else self.embedder.embed(texts)
        return vectors, started, time.perf_counter()

    def _report_written(self, writer: _StoreWriter, state: IndexProgress, report) -> None:
        """Count the files the writer has finished (committed or recorded as failed)."""
        while True:
            try:
                item = writer.done.get_nowait()
            except queue.Empty:
                return
            self._file_done(state, item, report)

    def _commit_ready(self, writer: _StoreWriter, work: _Work, summary: IndexSummary) -> None:
        """Hand every file whose chunks are all embedded to the writer."""
        for pi, (item, vectors) in enumerate(work.files):
            if item is None or not item.last or any(v is None for v in vectors):
                continue
            work.files[pi] = (None, [])

            def commit(item: _Parsed = item, vectors: list = vectors) -> None:
                self._commit(item, vectors, summary)
                writer.done.put(item)

            writer.submit(commit)

    def _resume(self, item: _Parsed, vectors: list, first: int) -> int:
        """Fill in the vectors an interrupted run kept for this version of a large file (same
        sha256, same chunk text), for its chunks from `first` on; how many. They are read on
        the file's first part and held in `item.kept` for the next ones."""
        if first == 0:
            if item.last and len(item.chunks) < CHECKPOINT_CHUNKS:
                return 0  # a file this small is never checkpointed
            item.kept = self.store.load_partial(item.job.path, item.job.sha256)
        n = 0
        for ci in range(first, len(item.chunks)):
            th_vec = item.kept.get(ci)
            if th_vec is not None and th_vec[0] == text_hash(item.chunks[ci].embed_text):
                vectors[ci] = th_vec[1]
                n += 1
        if n:
            log.info("%s: %d of %d chunks kept by an interrupted run", item.job.path, n, len(item.chunks))
        return n

    def _checkpoint(self, writer: _StoreWriter, work: _Work, force: bool = False) -> None:
        """Keep the vectors of large files still being embedded, every CHECKPOINT_CHUNKS chunks
        (or now, when `force`): a kill then costs at most that much embedding again."""
        for pi in list(work.unsaved):
            item, vectors = work.files[pi]
            cis = work.unsaved[pi]
            if item is None or (item.last and len(item.chunks) < CHECKPOINT_CHUNKS):
                del work.unsaved[pi]
                continue
            if cis and (force or len(cis) >= CHECKPOINT_CHUNKS):
                rows = [(ci, text_hash(item.chunks[ci].embed_text), vectors[ci]) for ci in cis]
                writer.submit(functools.partial(self.store.save_partial, item.job.path, item.job.sha256, rows))
                work.unsaved[pi] = []

    def _write_ahead(self, writer: _StoreWriter, work: _Work) -> None:
        """The run's last stretch, nothing left to parse: no file will come to share the vector
        index's next write, so it is made once FINAL_WRITE_BATCH vectors wait, the files still
        being embedded giving theirs ahead of their commit (Store.put_vectors_ahead). After
        the last batch only a few are left to write, not every file's since the last write."""
        for pi, (item, vectors) in enumerate(work.files):
            if item is None:
                continue
            done = work.ahead.setdefault(pi, set())
            new = [ci for ci, v in enumerate(vectors) if v is not None and ci not in done]
            if new:
                done.update(new)
                rows = [(ci, vectors[ci], item.chunks[ci].page) for ci in new]
                writer.submit(functools.partial(self.store.put_vectors_ahead, item.job.path, item.job.sha256, rows))
        if self.store.vectors_waiting >= FINAL_WRITE_BATCH:
            writer.submit(self.store.flush_vectors)

    def _failure_task(self, writer: _StoreWriter, item: _Parsed, summary: IndexSummary) -> Callable[[], None]:
        def record() -> None:
            self._record_failure(item, summary)
            writer.done.put(item)
        return record

    def _file_done(self, state: IndexProgress, item: _Parsed, report) -> None:
        state.files_done += 1
        state.bytes_done += item.job.size
        report(state)

    def _record_failure(self, item: _Parsed, summary: IndexSummary) -> None:
        j, e = item.job, item.error
        assert e is not None
        if self.store.keep_stale(j.path, j.size, j.mtime, j.sha256, e.problem.value, e.detail):
            summary.stale.append(j.path)  # its last good version stays searchable
        else:
            self.store.fail_file(j.path, j.root, j.size, j.mtime, j.sha256, e.problem.value, e.detail)
        summary.failed.append((j.path, e.problem.value, e.detail))
        log.info("not indexed: %s (%s: %s)", j.path, e.problem.value, e.detail)

    def _commit(self, item: _Parsed, vectors: list, summary: IndexSummary) -> None:
        import numpy as np

        j, doc = item.job, item.doc
        assert doc is not None
        self.store.put_file(j.path, j.root, j.size, j.mtime, j.sha256, item.chunks, np.stack(vectors),
                            title=doc.title, fmt=doc.format, pages=len(doc.pages), metadata=doc.metadata,
                            word_boxes=doc.ocr_words, defer_vectors=True)
        summary.indexed.append(j.path)
        summary.chunks_added += len(item.chunks)
        summary.pages_added += len(doc.pages)

    def remove_root(self, root: str | Path) -> int:
        """Forget a folder: its files and chunks leave the library. Returns files removed."""
        root_s = str(Path(root).expanduser().resolve())
        files = self.store.files(root=root_s)
        for f in files:
            self.store.remove_file(f.path)
        self.store.remove_root(root_s)
        return len(files)
