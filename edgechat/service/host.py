"""The engine process: the app's core work (Chroma, the embedder, the language model, parsers)
runs here, in a child process, so nothing it does can hold the GUI process's GIL.

Measured on two cores: Chroma's upsert holds the GIL for about 0.5 ms per vector (a second for
a big file's 2,000 chunks) and a language model's prompt prefill for several seconds; in the
same process as the window that froze the GUI for up to 6 s. Here, the GUI process only
unpickles small messages.

No Qt in this module (the child imports only the core). The protocol is pickled tuples over a
multiprocessing Connection:

    app -> engine   ("index", job_dict, seq) ("cancel_index",) ("chunk_settings", size, overlap)
                    ("ask", rid, payload) ("cancel_answer", rid | None) ("set_model", setting)
                    ("probe_models",) ("inspect", rid, source) ("close",)
    engine -> app   (event_name, args) for the runners' events (edgechat.service.runners), plus
                    ("seen", (seq,)) after each index command and ("closed", ()) at the end.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

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


def host_main(conn: Any, library: str, settings: dict) -> None:
    """Entry point of the engine process."""
    import signal

    # Ctrl+C in a terminal reaches the whole process group: the window decides when the engine
    # stops (it sends "close", and the library is closed cleanly), never the keyboard.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import edgechat.core  # noqa: F401  (telemetry off before onnxruntime loads)
    from edgechat.service.runners import AnswerRunner, DocumentInspector, IndexJob, IndexRunner, default_client_factory
    from edgechat.service.runners import default_engine_factory

    _setup_logging()
    log.info("engine process %d for %s", os.getpid(), library)
    send_lock = threading.Lock()
    alive = threading.Event()
    alive.set()

    answer_q: queue.Queue = queue.Queue()
    docs_q: queue.Queue = queue.Queue()

    def send(name: str, args: tuple) -> None:
        if not alive.is_set():
            return
        try:
            with send_lock:
                conn.send((name, args))
        except (OSError, EOFError, BrokenPipeError):
            alive.clear()  # the app is gone

    def emit(name: str, *args: Any) -> None:
        if name == "engine_ready":
            # The other threads get the Engine before the app hears it is ready (and starts
            # sending questions); the Engine itself never leaves this process.
            answer_q.put(("engine", args[0]))
            docs_q.put(("engine", args[0]))
            args = (None,)
        send(name, args)

    wake = threading.Event()
    index = IndexRunner(default_engine_factory(Path(library)), emit, wake.set)
    answer = AnswerRunner(default_client_factory, emit)
    inspector = DocumentInspector()
    stopping = threading.Event()
    latest_doc = [0]
    if settings.get("chunk_size"):
        from edgechat.core.indexing.chunking import ChunkSettings

        index.chunk_settings = ChunkSettings(size=int(settings["chunk_size"]), overlap=int(settings["chunk_overlap"]))
    answer.set_model(str(settings.get("model", "")))

    def index_loop() -> None:
        _lower_priority()
        engine = index.open()
        if engine is None:
            return
        while not stopping.is_set():
            wake.wait(0.5)
            wake.clear()
            if not stopping.is_set():
                index.drain()

    def answer_loop() -> None:
        while True:
            item = answer_q.get()
            if item is None:
                return
            kind = item[0]
            if kind == "engine":
                answer.engine = item[1]
            elif kind == "ask":
                answer.run(item[1], item[2])
            elif kind == "model":
                answer.set_model(item[1])
            elif kind == "probe":
                answer.probe_models()

    def docs_loop() -> None:
        engine = None
        while True:
            item = docs_q.get()
            if item is None:
                return
            if item[0] == "engine":
                engine = item[1]
                continue
            _, rid, source = item
            if rid != latest_doc[0]:
                continue  # a newer request supersedes this one
            emit("inspected", rid, inspector.inspect(engine, source))

    threads = [threading.Thread(target=f, name=n, daemon=True) for f, n in
               ((index_loop, "engine-index"), (answer_loop, "engine-answer"), (docs_loop, "engine-docs"))]
    for t in threads:
        t.start()

    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break  # the app went away: close cleanly anyway
            cmd = msg[0]
            if cmd == "close":
                break
            if cmd == "index":
                index.submit(IndexJob(**msg[1]))
                send("seen", (msg[2],))
            elif cmd == "cancel_index":
                index.cancel()
            elif cmd == "chunk_settings":
                from edgechat.core.indexing.chunking import ChunkSettings

                index.chunk_settings = ChunkSettings(size=int(msg[1]), overlap=int(msg[2]))
            elif cmd == "ask":
                answer.register(msg[1])
                answer_q.put(("ask", msg[1], msg[2]))
            elif cmd == "cancel_answer":
                answer.cancel(msg[1])
            elif cmd == "set_model":
                answer_q.put(("model", msg[1]))
            elif cmd == "probe_models":
                answer_q.put(("probe",))
            elif cmd == "inspect":
                latest_doc[0] = msg[1]
                docs_q.put(("doc", msg[1], msg[2]))
            else:
                log.warning("unknown command %r", cmd)
    finally:
        stopping.set()
        index.stop()
        answer.cancel()
        wake.set()
        answer_q.put(None)
        docs_q.put(None)
        for t in threads:
            t.join(timeout=60)
        if not threads[0].is_alive():  # never close the store under a running writer
            index.close_engine()
        log.info("engine process %d closing", os.getpid())
        send("closed", ())
        try:
            conn.close()
        except OSError:
            pass
