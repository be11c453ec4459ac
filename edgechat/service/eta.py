"""How long indexing has left, from the rate so far (sent with each Progress event)."""

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
