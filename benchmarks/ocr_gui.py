"""Does reading a scan by OCR keep the window responsive? A 20-page scan (text pages drawn, rendered
at 200 dpi and written back as image-only pages, as tests/scans.py makes them) and the same 20
pages as a text PDF are each indexed from the window, with a 10 ms heartbeat on the GUI thread
(as benchmarks/gui_responsiveness.py measures stalls): the lateness of its ticks (max, p99) while
each is indexed, the seconds it took, and the OCR progress lines the library pane showed; then the
window left idle as long as the scan took, for what the machine's other load alone costs it.

    QT_QPA_PLATFORM=offscreen python -m benchmarks.ocr_gui [--pages 20] [--out FILE]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import common
from benchmarks.common import emit, machine
from benchmarks.gui_responsiveness import summary

WORDS = ("harbour keeper lantern storm tide rope anchor gull reef chart bell watch ship coast "
         "north valley river herd rain season").split()


def page_text(n: int) -> str:
    lines = []
    for i in range(30):
        words = [WORDS[(n * 7 + i * 3 + k) % len(WORDS)] for k in range(9)]
        lines.append(f"Page {n} line {i}: the " + " ".join(words) + ".")
    return "\n".join(lines)


def index_in_window(folder: Path | None, home: Path, idle_s: float = 0.0) -> dict:
    """Index `folder` from a new window, measuring the GUI thread; with no folder, the window
    left idle for `idle_s` (what the machine's other load alone costs it)."""
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer

    from edgechat.ui.app import make_application, settle
    from edgechat.ui.mainwindow import MainWindow
    from edgechat.ui.progress_text import progress_line

    app = make_application([sys.argv[0]])
    w = MainWindow(home / "library")
    w.resize(1400, 860)
    w.show()
    app.processEvents()
    settle()

    def pump(cond, timeout: float) -> bool:
        return common.pump(app, cond, timeout)

    pump(lambda: w.engine_ready, 120)
    pump(lambda: not w.workers.busy and w.workers.pending() == 0, 120)
    clock = QElapsedTimer()
    clock.start()
    ticks: list[float] = []
    last = [clock.nsecsElapsed()]
    lines: list[str] = []

    def beat() -> None:
        now = clock.nsecsElapsed()
        ticks.append((now - last[0]) / 1e9 - 0.010)
        last[0] = now
        p = w.library_panel.progress.last
        if p is not None and p.ocr_total:
            line = progress_line(p)
            if not lines or lines[-1] != line:
                lines.append(line)

    heart = QTimer()
    heart.setTimerType(Qt.TimerType.PreciseTimer)
    heart.setInterval(10)
    heart.timeout.connect(beat)
    heart.start()
    last[0] = clock.nsecsElapsed()
    t0 = time.perf_counter()
    if folder is None:
        done = not pump(lambda: False, idle_s)
    else:
        w.add_paths([str(folder)])
        pump(lambda: w.workers.busy or w.workers.pending() > 0, 10)
        done = pump(lambda: not w.workers.busy and w.workers.pending() == 0, 900)
    seconds = time.perf_counter() - t0
    heart.stop()
    w.close()
    from edgechat.core.engine import Engine

    with Engine(home / "library", readonly=True) as engine:
        files = engine.files()
    return {"finished": done, "seconds": round(seconds, 1), "stalls": summary(ticks[1:]),
            "ocr_progress_lines": len(lines), "first_lines": lines[:3], "last_line": lines[-1] if lines else "",
            "files": [{"name": Path(f.path).name, "state": str(f.state), "detail": f.detail} for f in files]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    from edgechat.core import paths
    from tests import helpers, scans

    os.environ.setdefault("EDGECHAT_MODELS", str(paths.models_dir()))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    texts = [page_text(n) for n in range(1, args.pages + 1)]
    work = Path(tempfile.mkdtemp(prefix="edgechat-ocr-gui-"))
    result: dict = {"machine": machine(), "pages": args.pages}
    try:
        (work / "scan").mkdir()
        (work / "text").mkdir()
        data, _ = scans.make_scan(texts)
        (work / "scan" / "scan20.pdf").write_bytes(data)
        (work / "text" / "text20.pdf").write_bytes(helpers.make_pdf(texts))
        result["scan_mb"] = round(len(data) / 1e6, 2)
        for kind in ("text", "scan"):
            home = work / f"home-{kind}"
            os.environ["EDGECHAT_HOME"] = str(home)
            result[kind] = index_in_window(work / kind, home)
        home = work / "home-idle"
        os.environ["EDGECHAT_HOME"] = str(home)
        result["idle"] = index_in_window(None, home, idle_s=result["scan"]["seconds"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(result, args.out)


if __name__ == "__main__":
    main()
