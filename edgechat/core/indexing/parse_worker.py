"""Parsing in a child process that can be stopped: the per-file time limit.

A pathological file (a PDF whose content stream takes minutes to decode, a parser stuck in a
loop) must not hold up the run, and a thread cannot be killed. So `parse_document` runs in one
small child process (multiprocessing "spawn": a fresh interpreter, nothing inherited from the
app), started once per indexing run (or ahead of it: an open Engine keeps one ready) and reused
for every file. The parent waits for each answer
at most `ParseLimit.seconds(size)`; past that the child is killed, the file is reported as
`Problem.TOO_SLOW` with the limit in its detail, and the next file starts a new child. A child
that dies on a file (a crash inside a C library, the out-of-memory killer) is reported as a
malformed file ("the reader crashed"), and the run goes on.

A child that cannot start at all (spawn re-runs the parent's main script: a script without an
`if __name__ == "__main__"` guard, or one read from stdin, breaks it) makes the worker unusable:
`ParseWorkerUnavailable`, and the indexer parses in its own process, without a time limit,
saying so in the log.

The cost for ordinary files is one interpreter start per run (started ahead by an open Engine, or
its imports overlapping the scan) and pickling each document's text back through a pipe.
Chunking stays in the parent: done in the child it costs more CPU than it saves (the tokenizer
loaded again in every child, the chunks pickled back; benchmarks.pipeline_overlap measures it).

The limit scales with the file: `base_s + per_mb_s x size in MB`, capped at `max_s`. The default
(60 s + 30 s/MB) leaves several times what pypdf takes on text-dense manuals on a busy two-core
machine, so a file past it is stuck, not slow. `EDGECHAT_PARSE_LIMIT` ("base" or "base,per_mb" in seconds) overrides it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from edgechat.core.records import Document, DocumentError, Problem

log = logging.getLogger(__name__)

ENV_LIMIT = "EDGECHAT_PARSE_LIMIT"


@dataclass(frozen=True)
class ParseLimit:
    """How long one file may take to parse: base_s + per_mb_s x MB, at most max_s."""

    base_s: float = 60.0
    per_mb_s: float = 30.0
    max_s: float = 1800.0

    def seconds(self, size_bytes: int) -> float:
        return min(self.max_s, self.base_s + self.per_mb_s * max(0, size_bytes) / 1e6)

    @classmethod
    def from_env(cls, default: "ParseLimit | None" = None) -> "ParseLimit":
        """The default, or what EDGECHAT_PARSE_LIMIT says ("90" or "90,30")."""
        base = default or cls()
        raw = os.environ.get(ENV_LIMIT, "").strip()
        if not raw:
            return base
        try:
            parts = [float(x) for x in raw.split(",")]
        except ValueError:
            log.warning("%s=%r is not 'seconds' or 'seconds,seconds_per_mb'; using the default", ENV_LIMIT, raw)
            return base
        per_mb = parts[1] if len(parts) > 1 else base.per_mb_s
        return cls(parts[0], per_mb, max(base.max_s, parts[0]))


def _describe_limit(limit: float, size: int) -> str:
    return f"parsing was stopped after {limit:.0f} s (the limit for a {size / 1e6:.1f} MB file)"


# ---------------------------------------------------------------------------- the child


def _watch_parent(parent_pid: int) -> None:
    """Exit when the parent is gone (killed with the engine process): never an orphan parser."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(0)


def _serve(conn: Connection, parent_pid: int) -> None:
    """The child's loop: (path, password, max_bytes) in, ("ok", Document) or ("error", problem
    value, detail) out. DocumentError is not sent as itself: its pickle loses the problem."""
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    from edgechat.core import documents  # imported once, before the first file arrives
    from edgechat.core.documents import ocr

    def page_read(done: int, total: int) -> None:  # a scanned page read: the parent shows it
        conn.send(("ocr", done, total))

    ocr.set_progress(page_read)
    conn.send(("ready",))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        path, password, max_bytes = request
        try:
            reply: tuple = ("ok", documents.parse_document(path, password=password, max_bytes=max_bytes))
        except DocumentError as e:
            reply = ("error", e.problem.value, e.detail)
        except BaseException as e:  # noqa: BLE001 - the child always answers; parse_document lets nothing else out
            reply = ("error", Problem.MALFORMED.value, f"{type(e).__name__}: {e}"[:300])
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


# ---------------------------------------------------------------------------- the parent


class ParseCancelled(Exception):
    """The run was cancelled while a file was being parsed (the child was stopped)."""


class ParseWorkerUnavailable(Exception):
    """The child process could not be started (or died before it was ready)."""


_START_LOCK = threading.Lock()
OCR_PAGE_S = 120.0  # the time one scanned page may take to be read by OCR, on a very busy machine
STARTUP_S = 120.0  # an interpreter start and the parsers' imports, on a very busy machine


class ParseWorker:
    """One child process parsing files one at a time, killed and replaced when a file is over
    its time limit. Use from one thread; `close()` (or a with block) ends the child."""

    def __init__(self, limit: ParseLimit | None = None) -> None:
        self.limit = limit or ParseLimit.from_env()
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: BaseProcess | None = None
        self._conn: Connection | None = None
        self.started = 0  # children started (1 + restarts): for tests and benchmarks
        self.stopped_for_time = 0
        self.usable = True  # False once a child failed to start: parse in process instead
        self.used = False  # a file was sent to it
        self._ready = False

    def start(self) -> None:
        """Start the child now (its imports then overlap the caller's scan). Idempotent."""
        if not self.usable or (self._proc is not None and self._proc.is_alive()):
            return
        self._stop()
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(target=_serve, args=(child, os.getpid()), name="edgechat-parse", daemon=True)
        # The app's engine process is itself a daemonic multiprocessing child, and multiprocessing
        # refuses children to those (they could be orphaned). This child cannot be: it exits when
        # its parent goes (_watch_parent) and is killed by close(). So the flag is lifted while
        # it starts.
        me = multiprocessing.current_process()
        daemonic = bool(me._config.get("daemon"))  # type: ignore[attr-defined]
        with _START_LOCK:
            if daemonic:
                me._config["daemon"] = False  # type: ignore[attr-defined]
            try:
                proc.start()
            finally:
                if daemonic:
                    me._config["daemon"] = True  # type: ignore[attr-defined]
        child.close()
        self._proc, self._conn = proc, parent
        self._ready = False
        self.started += 1

    def _wait_ready(self, cancel: threading.Event | None) -> None:
        """The child's time limit counts from when it is ready, not from the interpreter start."""
        conn = self._conn
        assert conn is not None
        deadline = time.monotonic() + STARTUP_S
        while not self._ready:
            if cancel is not None and cancel.is_set():
                self._stop()
                raise ParseCancelled()
            try:
                if conn.poll(0.25):
                    if conn.recv() == ("ready",):
                        self._ready = True
                    continue
            except (EOFError, OSError):
                pass
            else:
                if time.monotonic() < deadline:
                    continue
            code = self._stop()
            self.usable = False
            log.warning("the parse worker could not start (exit code %s): parsing in this process, "
                        "without a time limit", code)
            raise ParseWorkerUnavailable(f"exit code {code}")

    def parse(
        self,
        path: str,
        *,
        size: int,
        password: str | None = None,
        max_bytes: int = 200 * 1024 * 1024,
        cancel: threading.Event | None = None,
        ocr_progress: Callable[[int, int], None] | None = None,
    ) -> Document:
        """parse_document(path) in the child, within the limit for a file of `size` bytes.
        A scanned PDF's pages read by OCR are reported to `ocr_progress` (done, total) as they
        are read, and each one gives the file OCR_PAGE_S more (reading a scan takes time by the
        page, not by the byte).
        Raises DocumentError (TOO_SLOW past the limit), ParseCancelled or ParseWorkerUnavailable."""
        limit = self.limit.seconds(size)
        self.used = True
        if not self.usable:
            raise ParseWorkerUnavailable("not started")
        if self._proc is None or not self._proc.is_alive():
            self.start()  # the first file, or the child died between files
        self._wait_ready(cancel)
        conn = self._conn
        assert conn is not None
        try:
            conn.send((path, password, max_bytes))
        except (OSError, ValueError):  # the child died just now: one more try
            self._stop()
            self.start()
            self._wait_ready(cancel)
            conn = self._conn
            assert conn is not None
            conn.send((path, password, max_bytes))
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stopped_for_time += 1
                self._stop()
                log.warning("%s: %s", path, _describe_limit(limit, size))
                raise DocumentError(Problem.TOO_SLOW, _describe_limit(limit, size))
            if cancel is not None and cancel.is_set():
                self._stop()
                raise ParseCancelled(path)
            try:
                ready = conn.poll(min(left, 0.25))
                if ready:
                    reply = conn.recv()
                    if reply[0] == "ocr":  # a page of a scan read: more time, and progress
                        deadline = max(deadline, time.monotonic() + OCR_PAGE_S)
                        if ocr_progress is not None:
                            ocr_progress(reply[1], reply[2])
                        continue
                    break
            except (EOFError, OSError):
                code = self._stop()
                how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                raise DocumentError(Problem.MALFORMED, f"the reader crashed on this file ({how})") from None
        if reply[0] == "ok":
            doc: Document = reply[1]
            return doc
        raise DocumentError(Problem(reply[1]), reply[2])

    def _stop(self) -> int | None:
        """Kill the child (if any); its exit code."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            conn.close()
        if proc is None:
            return None
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        code = proc.exitcode
        if code is not None:
            proc.close()
        return code

    def close(self) -> None:
        """Ask the child to finish, then make sure it has. A child never sent a file is stopped
        at once (it may still be importing: nothing of it is worth waiting for)."""
        proc, conn = self._proc, self._conn
        if proc is not None and conn is not None and proc.is_alive() and self.used:
            try:
                conn.send(None)
                proc.join(timeout=2)
            except (OSError, ValueError):
                pass
        self._stop()

    def __enter__(self) -> "ParseWorker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpareWorker:
    """One parse worker started ahead of the next indexing run, for a library that stays open
    (the app's): the run then parses its first file at once instead of waiting for an
    interpreter and the parsers' imports. A run `take`s it and `give_back`s it: an unused one
    waits on, a used one is replaced by a fresh child, in a thread of its own (ending one and
    starting the next is work a run's summary need not wait for), so a parser's memory never
    outlives its run."""

    def __init__(self) -> None:
        self._worker: ParseWorker | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def waiting(self) -> ParseWorker | None:
        """The worker started ahead, if one is (for tests and benchmarks)."""
        return self._worker

    def start(self) -> None:
        """Start one unless one is waiting already or this was closed."""
        with self._lock:
            if self._worker is not None or self._closed:
                return
            worker = ParseWorker()
            try:
                worker.start()
            except OSError:  # no pipe or process to be had: only a head start, the run starts its own
                log.debug("the parse worker could not be started ahead", exc_info=True)
                return
            self._worker = worker

    def take(self) -> ParseWorker | None:
        """The waiting worker, now the caller's (one run at a time uses it); None if none is."""
        with self._lock:
            worker, self._worker = self._worker, None
            return worker

    def give_back(self, worker: ParseWorker) -> None:
        if not worker.used and worker.usable:
            with self._lock:
                if self._worker is None and not self._closed:
                    self._worker = worker
                    return

        def replace() -> None:
            worker.close()
            if worker.usable:  # a child that cannot start here will not start ahead either
                self.start()

        threading.Thread(target=replace, name="edgechat-parse-spare", daemon=True).start()

    def close(self) -> None:
        """End the waiting worker; none is started after this."""
        with self._lock:
            self._closed = True
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.close()
