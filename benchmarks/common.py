"""Shared helpers for the benchmarks: machine description, repeated timing, peak memory."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


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


def summary(values: list[float]) -> dict:
    vals = sorted(values)
    return {
        "median": statistics.median(vals),
        "min": vals[0],
        "max": vals[-1],
        "p95": vals[min(len(vals) - 1, int(round(0.95 * (len(vals) - 1))))],
        "n": len(vals),
    }


def repeat(fn: Callable[[], float], n: int) -> dict:
    return summary([fn() for _ in range(n)])


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB, macOS bytes)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def emit(result: dict, out: str | None) -> None:
    text = json.dumps(result, indent=2, default=str)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text)
    print(text)
