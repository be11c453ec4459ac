"""Indexing progress as a person reads it: counts, the current file, and the time left.
Pure Python (no Qt) so it can be tested alone."""

from __future__ import annotations

from edgechat.core.records import IndexPhase
from edgechat.service.protocol import Progress


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


def progress_line(p: Progress) -> str:
    """"12 of 40 files · 350 of 1,200 chunks · bread.md · about 2 min left", and while a scan
    is read: "· scan.pdf: page 3 of 20 read by OCR"."""
    if p.phase == IndexPhase.SCANNING:
        return "Looking for new and changed files…"
    parts = [f"{p.files_done:,} of {p.files_total:,} files"]
    if p.chunks_total:
        parts.append(f"{p.chunks_done:,} of {p.chunks_total:,} passages")
    if p.current:
        parts.append(p.current.replace("\\", "/").rsplit("/", 1)[-1])
    if p.ocr_total and p.ocr_file:
        name = p.ocr_file.replace("\\", "/").rsplit("/", 1)[-1]
        parts.append(f"{name}: page {min(p.ocr_done + 1, p.ocr_total)} of {p.ocr_total} read by OCR")
    eta = format_duration(p.eta)
    if eta:
        parts.append(eta)
    if p.paused:
        parts.append("paused while answering")
    return " · ".join(parts)
