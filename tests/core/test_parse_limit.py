"""The per-file parse time limit: a file that takes too long to parse is stopped and reported,
and the run goes on. Real child processes, a genuinely slow PDF (no sleeping fake), real Chroma.

The slow input: a 0.5 MB PDF whose 2,000 pages all draw one shared, deflated content stream of
60,000 positioned text runs. The reader decodes and lays out that stream again for every page:
PDFium about 0.15 s a page on two shared cores (5 minutes for the file), pypdf ten times longer.
The tests set the limit to a few seconds.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import zlib
from pathlib import Path

import pytest

from edgechat.core.engine import Engine
from edgechat.core.indexing.parse_worker import ENV_LIMIT, ParseLimit, ParseWorker
from edgechat.core.records import DocumentError, FileState, Problem
from tests.core.test_indexing import consistent
from tests.helpers import ASTRONOMY, make_pdf, write


def slow_pdf(pages: int = 2000, runs: int = 60_000) -> bytes:
    """A small valid PDF that pypdf takes minutes to read (see the module docstring)."""
    body = b"BT /F1 9 Tf\n" + b"".join(b"1 0 0 1 %d %d Tm (w) Tj\n" % (i % 500, i % 700) for i in range(runs)) + b"ET\n"
    stream = zlib.compress(body, 9)
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    font = 4 + pages
    objs += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
             f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()] * pages
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body_ in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body_ + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def test_the_limit_scales_with_size_and_reads_the_environment(monkeypatch):
    limit = ParseLimit(base_s=60, per_mb_s=30, max_s=600)
    assert limit.seconds(0) == 60
    assert limit.seconds(2_000_000) == 120
    assert limit.seconds(10**9) == 600
    monkeypatch.setenv(ENV_LIMIT, "5,1")
    assert ParseLimit.from_env().seconds(3_000_000) == 8
    monkeypatch.setenv(ENV_LIMIT, "nonsense")
    assert ParseLimit.from_env() == ParseLimit()


def test_a_file_over_the_limit_is_stopped_reported_and_the_run_goes_on(library, embedder, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "a-pathological.pdf").parent.mkdir(parents=True)
    (docs / "a-pathological.pdf").write_bytes(slow_pdf())
    (docs / "b-planets.pdf").write_bytes(make_pdf(["Venus is hotter than Mercury.", "Jupiter is the largest."]))
    write(docs / "c-notes.md", ASTRONOMY)
    monkeypatch.setenv(ENV_LIMIT, "3,0")
    with Engine(library, embedder=embedder) as e:
        summary = e.index([docs])
        assert [(Path(p).name, problem) for p, problem, _ in summary.failed] == [
            ("a-pathological.pdf", Problem.TOO_SLOW.value)]
        assert "stopped after 3 s" in summary.failed[0][2]
        # The files after it were parsed by a fresh child and indexed.
        assert sorted(Path(p).name for p in summary.indexed) == ["b-planets.pdf", "c-notes.md"]
        states = {Path(f.path).name: f for f in e.files()}
        assert states["a-pathological.pdf"].state is FileState.FAILED
        assert states["a-pathological.pdf"].problem == "took too long to read"
        assert "Venus" in e.search("How hot is Venus?", k=1).sources[0].content
        consistent(e.parts.store)
        # Unchanged, it is not tried again on the next run.
        again = e.refresh()
        assert again.failed == [] and again.unchanged == 3


def test_an_indexed_file_that_turns_slow_keeps_its_passages_as_stale(library, embedder, tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    pdf = docs / "report.pdf"
    pdf.parent.mkdir(parents=True)
    pdf.write_bytes(make_pdf(["The harbour report says tides rose by four centimetres."]))
    monkeypatch.setenv(ENV_LIMIT, "3,0")
    with Engine(library, embedder=embedder) as e:
        e.index([docs])
        pdf.write_bytes(slow_pdf())
        os.utime(pdf, (time.time() + 5, time.time() + 5))
        summary = e.refresh()
        assert summary.stale == [str(pdf.resolve())]
        rec = {Path(f.path).name: f for f in e.files()}["report.pdf"]
        assert rec.state is FileState.STALE and rec.problem == Problem.TOO_SLOW.value
        assert "tides rose" in e.search("How much did the tides rise?", k=1).sources[0].content


def test_a_child_killed_while_parsing_is_reported_and_replaced(tmp_path):
    slow = tmp_path / "slow.pdf"
    slow.write_bytes(slow_pdf())
    ok = tmp_path / "ok.md"
    write(ok, ASTRONOMY)
    with ParseWorker(ParseLimit(base_s=600, per_mb_s=0)) as worker:
        worker.parse(str(ok), size=ok.stat().st_size)  # started and ready (a busy machine is slow to start)
        proc = worker._proc
        assert proc is not None and proc.pid is not None
        # What a crash inside a C parser or the out-of-memory killer looks like from here.
        killer = threading.Timer(1.0, os.kill, (proc.pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(DocumentError) as info:
            worker.parse(str(slow), size=slow.stat().st_size)
        killer.join()
        assert info.value.problem is Problem.MALFORMED
        assert "crashed" in info.value.detail and f"signal {int(signal.SIGKILL)}" in info.value.detail
        doc = worker.parse(str(ok), size=ok.stat().st_size)  # a new child reads the next file
        assert "Jupiter" in "".join(p.text for p in doc.pages)
        assert worker.started == 2 and worker.usable


def test_cancelling_during_a_long_parse_stops_the_child_and_records_nothing(library, embedder, tmp_path,
                                                                          monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "slow.pdf").write_bytes(slow_pdf())
    monkeypatch.setenv(ENV_LIMIT, "600,0")
    cancel = threading.Event()
    with Engine(library, embedder=embedder) as e:
        timer = threading.Timer(2.0, cancel.set)
        timer.start()
        summary = e.index([docs], cancel=cancel)  # returns once cancelled, not after ten minutes
        timer.join()
        assert summary.cancelled and summary.failed == [] and summary.indexed == []
        assert e.files() == []  # nothing recorded about a file that was not finished


UNGUARDED_SCRIPT = """
import json, logging, sys
from pathlib import Path
from edgechat.core.embedding import load_default_embedder
from edgechat.core.indexing.indexer import Indexer
from edgechat.core.store import Store
logging.basicConfig(level=logging.WARNING)
with Store(Path(sys.argv[1])) as store:
    s = Indexer(store, load_default_embedder()).index([sys.argv[2]])
    print(json.dumps({"indexed": len(s.indexed), "failed": s.failed}))
"""


def test_a_worker_that_cannot_start_falls_back_to_parsing_in_process(tmp_path):
    # A script read from stdin: spawn cannot re-run it in the child, so the child dies at start.
    import json
    import subprocess
    import sys

    docs = tmp_path / "docs"
    write(docs / "notes.md", ASTRONOMY)
    (docs / "planets.pdf").write_bytes(make_pdf(["Venus is hotter than Mercury."]))
    r = subprocess.run([sys.executable, "-", str(tmp_path / "lib"), str(docs)], input=UNGUARDED_SCRIPT,
                       capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {"indexed": 2, "failed": []}
    assert "the parse worker could not start" in r.stderr
    assert r.stderr.count("the parse worker could not start") == 1  # tried once, not per file


def _limit_in_a_daemon(path: str, conn) -> None:
    """Runs in a daemonic child, as the app's engine process does."""
    try:
        with ParseWorker(ParseLimit(base_s=2, per_mb_s=0)) as worker:
            worker.parse(path, size=os.path.getsize(path))
        conn.send(("parsed", ""))
    except DocumentError as e:
        conn.send((e.problem.value, e.detail))
    except BaseException as e:  # noqa: BLE001 - what went wrong, for the assertion message
        conn.send(("unexpected", f"{type(e).__name__}: {e}"))


def test_the_limit_works_inside_a_daemonic_engine_process(tmp_path):
    # The window starts the engine with multiprocessing (spawn, daemon=True); multiprocessing
    # refuses children to daemonic processes unless the worker lifts that for its own child.
    import multiprocessing

    slow = tmp_path / "slow.pdf"
    slow.write_bytes(slow_pdf())
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_limit_in_a_daemon, args=(str(slow), child), daemon=True)
    proc.start()
    assert parent.poll(300), "no answer from the daemonic process"
    problem, detail = parent.recv()
    proc.join(30)
    mb = slow.stat().st_size / 1e6
    assert (problem, detail) == (Problem.TOO_SLOW.value, f"parsing was stopped after 2 s (the limit for a {mb:.1f} MB file)")


def test_an_open_engine_keeps_a_started_parse_worker_for_the_next_run(tmp_path, embedder):
    """The app opens the engine at start-up; the first folder dropped then parses at once, in a
    child started ahead, and each run that used a child leaves a fresh one for the next."""
    docs = tmp_path / "docs"
    write(docs / "planets.md", ASTRONOMY)
    with Engine(tmp_path / "lib", embedder=embedder) as engine:
        engine.open()
        ahead = engine._spare.waiting
        assert ahead is not None and ahead._proc is not None and ahead._proc.is_alive()
        summary = engine.index([docs])
        assert summary.indexed == [str((docs / "planets.md").resolve())]
        assert ahead.used and ahead.started == 1  # the run parsed in the child started ahead
        deadline = time.monotonic() + 30  # the next one starts in a thread of its own
        while engine._spare.waiting is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ahead._proc is None  # the used child was ended: its memory does not outlive its run
        fresh = engine._spare.waiting
        assert fresh is not None and fresh is not ahead and fresh._proc is not None and fresh._proc.is_alive()
        assert engine.index([docs]).unchanged == 1
        assert engine._spare.waiting is fresh and not fresh.used  # nothing parsed: the same child waits
        pid = fresh._proc.pid
    assert fresh._proc is None  # closing the library ends it
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)

