"""A large file indexed by runs that are killed every N seconds (a laptop lid): does it finish?

    python -m benchmarks.robustness_resume [--pages 900] [--interval 30] [--max-runs 40]

Writes a PDF of `--pages` pages of made-up text (about one chunk a page), then starts
`edgechat index` on it in a child process, SIGKILLs it `--interval` seconds later, and starts it
again, until a run finishes on its own or `--max-runs` runs were killed. After each kill it reads
how many chunk vectors the library kept for the file (partial_vectors). Before the checkpoints
(indexer.CHECKPOINT_CHUNKS) every run started the file from its first chunk, so a file that
needs more than one interval of embedding never finished. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_pdf(path: Path, pages: int, seed: int = 11) -> None:
    from tests.helpers import make_pdf

    rng = random.Random(seed)
    vocab = [f"{a}{b}" for a in ("harbour", "ledger", "copper", "meadow", "signal", "quarry") for b in range(60)]
    texts = []
    for _ in range(pages):
        lines = [" ".join(rng.choice(vocab) for _ in range(10)) for _ in range(16)]
        texts.append("\n".join(lines))
    path.write_bytes(make_pdf(texts))


def kept(library: Path) -> int:
    db = library / "library.sqlite3"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM partial_vectors").fetchone()[0]
    except sqlite3.Error:
        return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=900)
    ap.add_argument("--interval", type=float, default=30.0)
    ap.add_argument("--max-runs", type=int, default=40)
    ap.add_argument("--baseline", action="store_true", help="also time one uninterrupted run")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="edgechat-resume-") as tmp:
        work = Path(tmp)
        docs = work / "docs"
        docs.mkdir()
        pdf = docs / "manual.pdf"
        write_pdf(pdf, args.pages)
        library = work / "library"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        runs = []
        finished = False
        t_all = time.perf_counter()
        for _ in range(args.max_runs):
            t = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "edgechat", "--library", str(library), "index", "--json",
                                     str(docs)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                out, _ = proc.communicate(timeout=args.interval)
                finished = proc.returncode == 0
                summary = {}
                try:
                    summary = json.loads(out)["summary"]
                except (ValueError, KeyError):
                    pass
                runs.append({"run_s": round(time.perf_counter() - t, 1), "exit": proc.returncode,
                             "resumed_chunks": summary.get("resumed_chunks"), "chunks": summary.get("chunks_added")})
                break
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                runs.append({"run_s": round(time.perf_counter() - t, 1), "killed": True, "kept_chunks": kept(library)})
        baseline = None
        if args.baseline:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "edgechat", "--library", str(work / "clean"), "index", str(docs)],
                           cwd=ROOT, env=env, capture_output=True, check=True)
            baseline = round(time.perf_counter() - t, 1)
        result = {"uninterrupted_s": baseline, "pages": args.pages, "pdf_kb": round(pdf.stat().st_size / 1024), "interval_s": args.interval,
                  "finished": finished, "runs": len(runs), "killed": sum(1 for r in runs if r.get("killed")),
                  "total_s": round(time.perf_counter() - t_all, 1), "per_run": runs}
    from benchmarks.common import with_provenance

    print(json.dumps(with_provenance(result), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
