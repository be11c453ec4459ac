"""What the per-file parse time limit costs, and how it behaves.

    python -m benchmarks.robustness_parse_limit [--folder DIR ...] [--repeats 2] [--limit 5]

1. Parse only: every supported file of the folders parsed in this process (`parse_document`)
   and through the parse worker (a child process, documents pickled back), alternating, with
   the worker's start-up timed on its own.
2. Index: each folder indexed into a fresh library with `isolate_parsing=False` and `True`
   (the default), alternating; the wall time of `Engine.index`-equivalent runs.
3. The limit: a small pathological PDF (tests/core/test_parse_limit.slow_pdf, minutes to read)
   followed by an ordinary file, through one worker under a `--limit` second limit: seconds
   until the slow file is reported, and until the next file is read by the new child.

Default folders: ../shared/data/corpus/md and ../shared/data/corpus/docx (many small files: the
worst case for a per-file round trip; indexing them takes a while: pass a smaller --folder). Prints
one JSON object (and each part on stderr as it is measured).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import SHARED, emit


def _files(folders: list[Path]) -> list[Path]:
    from edgechat.core.documents import is_supported

    return sorted(p for f in folders for p in f.rglob("*") if p.is_file() and is_supported(p))


def parse_only(files: list[Path], repeats: int) -> dict:
    from edgechat.core.documents import parse_document
    from edgechat.core.indexing.parse_worker import ParseWorker
    from edgechat.core.records import DocumentError

    inproc, worker_s, start_s = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        for p in files:
            try:
                parse_document(p)
            except DocumentError:
                pass
        inproc.append(time.perf_counter() - t)
        t = time.perf_counter()
        with ParseWorker() as w:
            w.start()
            # the first (tiny) parse waits for the child's imports: that is the start-up cost
            w.parse(str(files[0]), size=files[0].stat().st_size)
            start_s.append(time.perf_counter() - t)
            for p in files:
                try:
                    w.parse(str(p), size=p.stat().st_size)
                except DocumentError:
                    pass
        worker_s.append(time.perf_counter() - t)
    return {
        "files": len(files),
        "mb": round(sum(p.stat().st_size for p in files) / 1e6, 2),
        "in_process_s": [round(x, 2) for x in inproc],
        "worker_s": [round(x, 2) for x in worker_s],
        "worker_start_s": [round(x, 2) for x in start_s],
        "overhead_per_file_ms": round(
            1000 * (statistics.median(worker_s) - statistics.median(start_s) - statistics.median(inproc))
            / max(1, len(files)), 2),
    }


def index_runs(folder: Path, repeats: int, work: Path) -> dict:
    from edgechat.core.embedding import load_default_embedder
    from edgechat.core.indexing.indexer import Indexer
    from edgechat.core.store import Store

    embedder = load_default_embedder()
    out: dict[str, list[float]] = {"in_process": [], "worker": []}
    chunks: dict[str, int] = {}
    for _ in range(repeats):
        for name, isolate in (("in_process", False), ("worker", True)):
            with Store(work / f"lib-{time.time_ns()}") as store:
                t = time.perf_counter()
                s = Indexer(store, embedder, isolate_parsing=isolate).index([folder])
                out[name].append(round(time.perf_counter() - t, 2))
                chunks[name] = s.chunks_added
    return {"folder": str(folder), **out, "chunks": chunks,
            "worker_vs_in_process": round(statistics.median(out["worker"]) / statistics.median(out["in_process"]), 3)}


def limit_behaviour(limit: float, work: Path) -> dict:
    from edgechat.core.indexing.parse_worker import ParseLimit, ParseWorker
    from edgechat.core.records import DocumentError
    from tests.core.test_parse_limit import slow_pdf
    from tests.helpers import ASTRONOMY

    slow = work / "pathological.pdf"
    slow.write_bytes(slow_pdf())
    ok = work / "next.md"
    ok.write_text(ASTRONOMY)
    with ParseWorker(ParseLimit(base_s=limit, per_mb_s=0)) as w:
        w.start()
        w.parse(str(ok), size=ok.stat().st_size)  # started and warm, as in a run
        t = time.perf_counter()
        problem = detail = ""
        try:
            w.parse(str(slow), size=slow.stat().st_size)
        except DocumentError as e:
            problem, detail = e.problem.value, e.detail
        reported = time.perf_counter() - t
        w.parse(str(ok), size=ok.stat().st_size)
        next_read = time.perf_counter() - t
    return {"limit_s": limit, "file_kb": round(slow.stat().st_size / 1024, 1), "problem": problem, "detail": detail,
            "reported_after_s": round(reported, 2), "next_file_read_after_s": round(next_read, 2),
            "children_started": w.started}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", action="append")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--skip-index", action="store_true")
    args = ap.parse_args(argv)
    folders = [Path(f).resolve() for f in (args.folder or [SHARED / "corpus" / "md", SHARED / "corpus" / "docx"])]
    with tempfile.TemporaryDirectory(prefix="edgechat-parse-limit-") as tmp:
        work = Path(tmp)
        result: dict = {"parse_only": parse_only(_files(folders), args.repeats)}
        print(json.dumps(result), file=sys.stderr)  # each part as it is measured
        if not args.skip_index:
            result["index"] = []
            for f in folders:
                result["index"].append(index_runs(f, args.repeats, work))
                print(json.dumps(result["index"][-1]), file=sys.stderr)
        result["limit"] = limit_behaviour(args.limit, work)
    emit(result, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
