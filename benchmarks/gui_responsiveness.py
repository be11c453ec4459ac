"""How responsive the desktop app is: time from launch to the window shown, and the GUI
thread's longest stalls while a corpus is indexed and questions are answered at the same time.

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_responsiveness.py \\
        --corpus ../shared/data/corpus/pdf/debian [--questions 2] [--launches 3]

Prints one JSON object. Stalls are measured with a 10 ms heartbeat QTimer on the GUI thread:
each tick's lateness is the time since the previous tick minus 10 ms; max and p99 are reported
for the whole run and for the stretch where an answer was being written while indexing ran.
The app runs as the user runs it (default engine, embedder and language model if installed),
on a fresh temporary library; only EDGECHAT_HOME is redirected (models stay where they are).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import common

QUESTIONS = [
    "How do I install a package from a .deb file?",
    "How can I read a CSV file into a data frame in R?",
    "What does the set terminal command do in gnuplot?",
    "How do I report a bug in Debian?",
]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))
    return s[k]


def summary(lateness: list[float]) -> dict:
    ms = [x * 1000 for x in lateness]
    return {
        "ticks": len(ms),
        "max_ms": round(max(ms), 1) if ms else 0.0,
        "p99_ms": round(percentile(ms, 99), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "median_ms": round(statistics.median(ms), 1) if ms else 0.0,
        "over_100ms": sum(1 for x in ms if x > 100),
        "over_30ms": sum(1 for x in ms if x > 30),
    }


def measure_launch(runs: int, env: dict) -> dict:
    """Wall time from starting `python -m edgechat` to its log saying the window is shown."""
    times = []
    for i in range(runs):
        home = Path(tempfile.mkdtemp(prefix="edgechat-launch-"))
        e = dict(env, EDGECHAT_HOME=str(home))
        log = home / "logs" / "edgechat.log"
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "edgechat", "--library", str(home / "lib")], env=e,
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shown = None
        while time.perf_counter() - t0 < 60:
            if log.is_file() and "window shown" in log.read_text(encoding="utf-8", errors="replace"):
                shown = time.perf_counter() - t0
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(home, ignore_errors=True)
        if shown is not None:
            times.append(shown)
    return {
        "runs": len(times),
        "seconds": [round(t, 3) for t in times],
        "median_s": round(statistics.median(times), 3) if times else None,
        "min_s": round(min(times), 3) if times else None,
    }


def measure_stalls(corpus: Path, n_questions: int, extractive: bool, max_seconds: float) -> dict:
    import gc

    from PySide6.QtCore import QElapsedTimer, Qt, QTimer

    from edgechat.ui.app import make_application, settle

    app = make_application([sys.argv[0]])
    from edgechat.ui.mainwindow import MainWindow
    from edgechat.ui.settings import AppSettings

    home = Path(os.environ["EDGECHAT_HOME"])
    w = MainWindow(home / "library")
    if extractive:
        w.apply_settings(AppSettings(model="extractive"))
    w.resize(1400, 860)
    w.show()
    app.processEvents()
    settle()  # as run_app does once the window is up
    gc_pauses: list[float] = []
    gc_start = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            gc_start[0] = time.perf_counter()
        else:
            gc_pauses.append(time.perf_counter() - gc_start[0])

    gc.callbacks.append(on_gc)

    clock = QElapsedTimer()
    clock.start()
    ticks: list[tuple[float, float]] = []  # (time, lateness)
    last = [clock.nsecsElapsed()]

    def beat() -> None:
        now = clock.nsecsElapsed()
        ticks.append((now / 1e9, (now - last[0]) / 1e9 - 0.010))
        last[0] = now

    heart = QTimer()
    heart.setTimerType(Qt.TimerType.PreciseTimer)
    heart.setInterval(10)
    heart.timeout.connect(beat)

    def pump(cond, timeout: float) -> bool:
        return common.pump(app, cond, timeout)

    pump(lambda: w.engine_ready, 120)
    pump(lambda: not w.workers.busy and w.workers.pending() == 0, 120)
    heart.start()
    last[0] = clock.nsecsElapsed()
    t_index = clock.nsecsElapsed() / 1e9
    w.add_paths([str(corpus)])
    # Let indexing get going (model loaded, first files parsed) before the first question.
    pump(lambda: w.library_panel.progress.last is not None and w.library_panel.progress.last.chunks_done > 200, 300)
    answering: list[tuple[float, float]] = []
    answers = []
    for q in QUESTIONS[:n_questions]:
        t_a = clock.nsecsElapsed() / 1e9
        w.controller.ask(q)
        pump(lambda: not w.controller.answering, 600)
        t_b = clock.nsecsElapsed() / 1e9
        answering.append((t_a, t_b))
        turn = w.controller.turns[-1]
        answers.append({"question": q, "seconds": round(t_b - t_a, 2), "chars": len(turn.answer),
                        "cited": turn.cited_numbers, "stop_reason": turn.stop_reason})
        # Click the first chip, as a person would (or the first source when the answer cites
        # none): the viewer opens the document at the passage.
        if turn.cited_numbers:
            w.follow_citation(len(w.controller.turns) - 1, turn.cited_numbers[0])
        elif turn.sources:
            w.sources.select_number(int(turn.sources[0]["ordinal"]))
        pump(lambda: w.sources.viewer.current_kind() != "none", 20)
        pump(lambda: False, 1.0)
    indexing_done = pump(lambda: not w.workers.busy and w.workers.pending() == 0,
                         max(0.0, max_seconds - (clock.nsecsElapsed() / 1e9 - t_index)))
    t_end = clock.nsecsElapsed() / 1e9
    heart.stop()
    gc.callbacks.remove(on_gc)
    last = w.library_panel.progress.last
    progress = dataclasses.asdict(last) if last is not None else {}
    summary_data = dataclasses.asdict(w.last_summary) if getattr(w, "last_summary", None) else {}
    t_close = time.perf_counter()
    w.close()
    close_s = time.perf_counter() - t_close

    all_late = [x for t, x in ticks[1:]]
    during_answer = [x for t, x in ticks[1:] if any(a <= t <= b for a, b in answering)]
    worst = sorted(ticks[1:], key=lambda p: -p[1])[:5]
    return {
        "whole_run": summary(all_late),
        "while_answering_and_indexing": summary(during_answer),
        "worst_ticks": [{"at_s": round(t - t_index, 2), "late_ms": round(x * 1000, 1)} for t, x in worst],
        "gc_pauses": {"count": len(gc_pauses), "max_ms": round(max(gc_pauses, default=0) * 1000, 1)},
        "answers": answers,
        "client": dataclasses.asdict(w.client_info) if w.client_info else None,
        "indexing": {
            "finished": indexing_done,
            "seconds_measured": round(t_end - t_index, 1),
            "files_done": progress.get("files_done"),
            "files_total": progress.get("files_total"),
            "chunks_done": progress.get("chunks_done"),
            "summary": {k: summary_data.get(k) for k in ("indexed", "failed", "chunks_added", "seconds")},
        },
        "close_seconds": round(close_s, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus" / "pdf" / "debian")
    ap.add_argument("--questions", type=int, default=2)
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--extractive", action="store_true", help="answer without the language model")
    ap.add_argument("--max-seconds", type=float, default=1200, help="stop measuring after this long")
    ap.add_argument("--skip-stalls", action="store_true")
    args = ap.parse_args()

    from edgechat.core import paths

    env = dict(os.environ)
    env.setdefault("EDGECHAT_MODELS", str(paths.models_dir()))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    os.environ.update({k: env[k] for k in ("EDGECHAT_MODELS", "QT_QPA_PLATFORM")})

    result: dict = {"corpus": str(args.corpus), "cpus": os.cpu_count()}
    result["launch_to_window_shown"] = measure_launch(args.launches, env)
    if not args.skip_stalls:
        home = Path(tempfile.mkdtemp(prefix="edgechat-bench-"))
        os.environ["EDGECHAT_HOME"] = str(home)
        try:
            result["gui_stalls"] = measure_stalls(args.corpus, args.questions, args.extractive, args.max_seconds)
        finally:
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(common.with_provenance(result), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
