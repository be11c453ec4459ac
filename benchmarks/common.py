"""Shared helpers for the benchmarks: machine description, provenance, timing summaries, peak
memory."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):  # not on Windows
        return None


# The machine's load when the benchmark's process started (benchmarks.common is imported before
# any work): the load "before the run", which provenance() reports.
LOAD_BEFORE = _load_average()

# Questions about the Debian manuals (../shared/data/corpus/pdf/debian), for latency runs.
DEBIAN_QUERIES = [
    "How do I read a CSV file into a data frame?",
    "apt-get install a package from a specific release",
    "plot a function with gnuplot using logarithmic axes",
    "what is a Debian maintainer",
    "matrix inverse in octave",
    "linear regression with lm",
    "how to set the terminal type in gnuplot",
    "upload a package to the Debian archive",
    "integrate a function symbolically in maxima",
    "draw an arrow in asymptote",
    "What does the factor function do in R?",
    "configure the network interface",
    "How do I report a bug in Debian?",
    "install R packages from source into a private library",
    "compile C code for an R package with a Makefile",
    "set the output file and size of a PNG plot",
    "what is the difference between testing and unstable",
    "solve a system of linear equations",
    "environment variables read when R starts",
    "label the axes and add a title to a graph",
]


def machine() -> dict:
    import importlib.metadata as md

    versions = {}
    for pkg in ("edgechat", "chromadb", "onnxruntime", "onnxruntime-genai", "tokenizers", "pypdf", "numpy", "PySide6-Essentials"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem,
        "versions": versions,
        "date": time.strftime("%Y-%m-%d"),
    }


def git_commit(root: Path = ROOT) -> dict:
    """The commit the code ran at: {"commit": full hash, "dirty": True if tracked files differ
    from it}. {"commit": None} outside a git checkout."""
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if r.returncode != 0:
            return {"commit": None, "dirty": None}
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        return {"commit": r.stdout.strip(), "dirty": bool(changed)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def provenance(load_before: list[float] | None = None) -> dict:
    """Where a result came from, recorded in every JSON a benchmark writes: the commit (and
    whether the tree had changes), the date and time, and the machine: its cores, its load average
    before the run (by default when this process started), platform and processor."""
    m = machine()
    return {
        **git_commit(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "cores": os.cpu_count(),
            "load_average_before": load_before if load_before is not None else LOAD_BEFORE,
            "platform": m["platform"],
            "cpu": m["cpu"],
            "memory_gib": m["memory_gib"],
            "python": m["python"],
        },
        "argv": [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else list(sys.argv),
    }


def with_provenance(result: dict, load_before: list[float] | None = None) -> dict:
    """`result` with a "provenance" entry first (kept if it has one already)."""
    if not isinstance(result, dict) or "provenance" in result:
        return result
    return {"provenance": provenance(load_before), **result}


def summary(values: list[float]) -> dict:
    vals = sorted(values)
    return {
        "median": statistics.median(vals),
        "min": vals[0],
        "max": vals[-1],
        "p95": vals[min(len(vals) - 1, int(round(0.95 * (len(vals) - 1))))],
        "n": len(vals),
    }


class RecordingEmbedder:
    """An embedder that keeps every batch of texts the indexer asked it to embed, so a ceiling can
    embed exactly those texts (context headers included), in the same batches, alone."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self.batches: list[list[str]] = []
        self.calls: list[tuple[float, float]] = []  # perf_counter() at each call's start and end

    def embed(self, texts):
        self.batches.append(list(texts))
        t = time.perf_counter()
        try:
            return self._embedder.embed(texts)
        finally:
            self.calls.append((t, time.perf_counter()))

    def embed_encoded(self, texts, token_ids):
        """The indexer's call when it has the texts' token ids: recorded as embed() is."""
        self.batches.append(list(texts))
        t = time.perf_counter()
        try:
            return self._embedder.embed_encoded(texts, token_ids)
        finally:
            self.calls.append((t, time.perf_counter()))

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)


def replay_alone(embedder, batches: list[list[str]], in_flight: int | None = None) -> tuple[float, float]:
    """Embed the recorded batches again, alone, in a tight loop: (wall seconds, CPU seconds of
    this process). This is the ceiling an indexing run that made those calls is measured against.
    The batches are given to the embedder as the indexer gives them: `in_flight` at once (default
    the indexer's EMBED_IN_FLIGHT; with 1, one after the other, as an indexer with one batch in
    flight does)."""
    from edgechat.core.indexing.indexer import EMBED_IN_FLIGHT

    n = in_flight or EMBED_IN_FLIGHT
    t, c = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(n) as pool:  # callers started from this thread, as the indexer's are
        waiting: deque = deque()
        for texts in batches:
            waiting.append(pool.submit(embedder.embed, texts))
            if len(waiting) >= n:
                waiting.popleft().result()
        for f in waiting:
            f.result()
    return time.perf_counter() - t, time.process_time() - c


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB, macOS bytes)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def emit(result: dict, out: str | None) -> None:
    """Print the result as JSON, and write it to `out` if given, with its provenance."""
    text = json.dumps(with_provenance(result), indent=2, default=str)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text)
    print(text)


def pump(app, cond, timeout: float, poll: float = 0.001) -> bool:
    """Run the Qt event loop of `app` until `cond()` holds (True) or `timeout` seconds pass (False),
    sleeping `poll` seconds between rounds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        app.processEvents()
        if cond():
            return True
        time.sleep(poll)
    return False
