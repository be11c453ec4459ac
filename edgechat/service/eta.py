"""Indexing progress as a person reads it: counts, the current file, and the time left.
Pure Python (no Qt) so the estimate can be tested alone."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class EtaEstimator:
    """Time left from the rate of bytes indexed, smoothed so the number does not jump around.

    Files finish one at a time, so the rate is only trusted after `warmup` seconds and once
    some bytes are done; before that there is no estimate (None)."""

    warmup: float = 3.0
    smoothing: float = 0.3
    _t0: float | None = None
    _eta: float | None = None

    def reset(self) -> None:
        self._t0 = None
        self._eta = None

    def update(self, bytes_done: int, bytes_total: int, chunks_done: int = 0, chunks_total: int = 0,
               now: float | None = None) -> float | None:
        now = time.monotonic() if now is None else now
        if self._t0 is None:
            self._t0 = now
        elapsed = now - self._t0
        if bytes_total <= 0 or elapsed < self.warmup:
            return None
        # Bytes of finished files, plus the embedded share of chunks already parsed: a big file
        # in progress still counts for something.
        fraction = bytes_done / bytes_total
        if chunks_total > 0:
            fraction = max(fraction, min(1.0, chunks_done / chunks_total) * 0.999 * fraction if fraction else 0.0)
        if bytes_done <= 0 or fraction <= 0:
            return None
        raw = elapsed * (1.0 - fraction) / fraction
        self._eta = raw if self._eta is None else self.smoothing * raw + (1 - self.smoothing) * self._eta
        return max(0.0, self._eta)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = int(round(seconds))
    if s < 60:
        return "less than a minute left" if s >= 45 else f"about {max(5, (s + 4) // 5 * 5)} s left"
    m = (s + 30) // 60
    if m < 60:
        return f"about {m} min left"
    return f"about {m // 60} h {m % 60:02d} min left"


def progress_line(p: dict) -> str:
    """"12 of 40 files · 350 of 1,200 chunks · bread.md · about 2 min left"."""
    if p.get("phase") == "scanning":
        return "Looking for new and changed files…"
    parts = [f"{p.get('files_done', 0):,} of {p.get('files_total', 0):,} files"]
    if p.get("chunks_total"):
        parts.append(f"{p.get('chunks_done', 0):,} of {p.get('chunks_total', 0):,} passages")
    current = p.get("current") or ""
    if current:
        parts.append(current.replace("\\", "/").rsplit("/", 1)[-1])
    eta = format_duration(p.get("eta"))
    if eta:
        parts.append(eta)
    if p.get("paused"):
        parts.append("paused while answering")
    return " · ".join(parts)
