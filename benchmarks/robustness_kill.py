"""Nothing lost: indexing SIGKILLed at random moments, then compared with a clean index.

    python -m benchmarks.robustness_kill [--kills N] [--folder DIR] [--seed S] [--app]

CLI mode (default): `edgechat --library L index FOLDER` in a subprocess, SIGKILLed after a random
delay within the expected time of what is left to index, until N runs were really killed (a run
that finished first starts the library over); then a run that finishes. The library is
compared with a clean index of the same folder made separately: the same files indexed (and the
same states), the same chunk count, the same top-10 chunks for 10 queries taken from the
documents' own sentences. Between kills the library is opened read-only (which recovers it the
way any reader would) and checked: no file that was searchable before is missing.

Re-index variant: a clean index, then a third of the text files get a sentence appended, then the
re-index is killed N times. Between kills every file must be searchable, and each modified file's
chunks must be exactly its old version or its new one ("versions lost" counts the checks where
one was neither). The finished library is compared with a clean index of the modified folder.

App mode (`--app`): the real window offscreen with its engine process; the folder is added, the
engine process is SIGKILLed at random moments N times (the window restarts it; the folder is
added again after each restart, as the watcher or the start-up refresh would), then the run waits
until every file has a state and compares with the clean index.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import SHARED, pump, with_provenance

ROOT = Path(__file__).resolve().parents[1]
EDGECHAT = [sys.executable, "-m", "edgechat.cli"]


# ---------------------------------------------------------------- the folder


def default_folder(dest: Path, rng: random.Random, n: int = 30) -> Path:
    """~30 small documents copied from the corpus: Markdown (a third or more: the re-index variant
    edits text files), DOCX, small PDFs, an EPUB."""
    corpus = SHARED / "corpus"
    picks: list[Path] = []

    def small(pattern: str, limit: int, count: int) -> list[Path]:
        found = sorted(p for p in corpus.rglob(pattern) if p.is_file() and p.stat().st_size <= limit)
        rng.shuffle(found)
        return found[:count]

    picks += small("*.md", 30_000, 13)
    picks += small("*.docx", 80_000, 9)
    picks += small("*.pdf", 250_000, 6)
    picks += small("*.epub", 400_000, n - len(picks))
    dest.mkdir(parents=True, exist_ok=True)
    for i, p in enumerate(picks):
        shutil.copy2(p, dest / f"{i:02d}-{p.name}")
    return dest


# ---------------------------------------------------------------- runs


def run_index(library: Path, folder: Path, kill_after: float | None = None) -> dict[str, Any]:
    """One `edgechat index` run; killed (SIGKILL, whole process group) after `kill_after` s."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen([*EDGECHAT, "--library", str(library), "index", str(folder)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    killed = False
    if kill_after is not None:
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
    _, err = proc.communicate()
    return {"seconds": round(time.perf_counter() - t0, 2), "killed": killed, "returncode": proc.returncode,
            "stderr": err.decode(errors="replace")[-400:] if proc.returncode not in (0, -9) else ""}


class Reader:
    """Read-only views of libraries with one embedder loaded once."""

    def __init__(self) -> None:
        from edgechat.core.embedding import load_default_embedder

        self.embedder = load_default_embedder()

    def snapshot(self, library: Path, queries: list[str] | None = None) -> dict[str, Any]:
        from edgechat.core.engine import Engine

        with Engine(library, embedder=self.embedder, readonly=True) as e:
            files = {f.path: (str(f.state), f.problem, f.chunks) for f in e.files()}
            counts = e.counts().to_dict()
            db = e.parts.store.db
            texts: dict[str, list[str]] = {}
            for path, text in db.execute(
                    "SELECT f.path, c.text FROM chunks c JOIN files f ON f.file_id = c.file_id "
                    "WHERE f.state IN ('done', 'stale') ORDER BY f.path, c.page, c.start"):
                texts.setdefault(path, []).append(text)
            top = {}
            for q in queries or []:
                top[q] = [(s.path, s.page, s.start, s.end) for s in e.search(q, k=10).sources]
        return {"files": files, "counts": counts, "texts": texts, "top": top}


def queries_from(snap: dict[str, Any], rng: random.Random, n: int = 10) -> list[str]:
    """`n` sentences from the documents' own chunks (one per file, files chosen at random)."""
    out: list[str] = []
    paths = sorted(snap["texts"])
    rng.shuffle(paths)
    for p in paths:
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(" ".join(snap["texts"][p]).split()))
                     if 40 <= len(s.strip()) <= 200 and sum(c.isalpha() for c in s) > 30]
        if sentences:
            out.append(rng.choice(sentences))
        if len(out) == n:
            break
    return out


def compare(got: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    """Mismatches between a library and the clean reference."""
    gs = {p: v[0] for p, v in got["files"].items()}
    rs = {p: v[0] for p, v in ref["files"].items()}
    searchable = ("done", "stale")
    ref_ok = {p for p, s in rs.items() if s in searchable}
    got_ok = {p for p, s in gs.items() if s in searchable}
    top_diff = [q for q in ref["top"] if got["top"].get(q) != ref["top"][q]]
    return {
        "files_lost": sorted(ref_ok - got_ok),
        "files_extra": sorted(got_ok - ref_ok),
        "state_mismatches": sorted(p for p in set(gs) | set(rs) if gs.get(p) != rs.get(p)),
        "chunk_count": [got["counts"]["chunks"], ref["counts"]["chunks"]],
        "vectors_vs_chunks": [got["counts"]["vectors"], got["counts"]["chunks"]],
        "chunks_differ": sorted(p for p in ref_ok if got["texts"].get(p) != ref["texts"].get(p)),
        "top10_mismatches": len(top_diff),
        "top10_mismatch_queries": top_diff,
        "ok": (ref_ok == got_ok and gs == rs and got["counts"]["chunks"] == ref["counts"]["chunks"]
               and got["counts"]["vectors"] == got["counts"]["chunks"] and not top_diff),
    }


# ---------------------------------------------------------------- CLI mode


def cli_mode(folder: Path, work: Path, kills: int, rng: random.Random, reader: Reader) -> dict[str, Any]:
    out: dict[str, Any] = {}
    clean = run_index(work / "clean", folder)
    expected = clean["seconds"]
    ref0 = reader.snapshot(work / "clean")
    queries = queries_from(ref0, rng)
    ref = reader.snapshot(work / "clean", queries)
    out["clean_index_s"] = expected
    out["files"] = len(ref["files"])
    out["files_searchable"] = sum(1 for v in ref["files"].values() if v[0] in ("done", "stale"))
    out["chunks"] = ref["counts"]["chunks"]
    (work / "empty").mkdir()
    startup = run_index(work / "empty-lib", work / "empty")["seconds"]  # process start, model load
    work_s = max(1.0, expected - startup)
    out["startup_s"] = startup

    # (1) first index killed N times: each delay is drawn within the expected time of what is
    # left; a run that finished before its kill starts the library over (a trial that killed nothing)
    lib = work / "killed"
    runs, lost_between, attempts, total = [], 0, 0, max(1, out["chunks"])
    searchable_before: set[str] = set()
    chunks_now = 0
    while sum(1 for r in runs if r["killed"]) < kills and attempts < 3 * kills:
        attempts += 1
        left = max(0.0, 1 - chunks_now / total)  # by chunks: one big file can be most of the work
        delay = rng.uniform(0.2, startup + work_s * left)
        r = run_index(lib, folder, kill_after=delay)
        snap = reader.snapshot(lib)
        now = {p for p, v in snap["files"].items() if v[0] in ("done", "stale")}
        chunks_now = snap["counts"]["chunks"]
        lost = searchable_before - now
        lost_between += len(lost)
        searchable_before |= now
        partial = [p for p, v in snap["files"].items() if v[0] in ("done", "stale")
                   and snap["texts"].get(p) != ref["texts"].get(p)]
        runs.append({"delay_s": round(delay, 2), "killed": r["killed"], "searchable_after": len(now),
                     "lost_since_last": sorted(lost), "partial_files": partial,
                     "vectors_vs_chunks": [snap["counts"]["vectors"], snap["counts"]["chunks"]], "error": r["stderr"]})
        if not r["killed"]:
            shutil.rmtree(lib)
            searchable_before = set()
            chunks_now = 0
            runs[-1]["finished_before_kill: library started over"] = True
    final = run_index(lib, folder)
    cmp = compare(reader.snapshot(lib, queries), ref)
    out["first_index"] = {"kills": sum(1 for r in runs if r["killed"]), "runs": runs,
                          "files_lost_between_kills": lost_between, "final_run_s": final["seconds"],
                          "final_returncode": final["returncode"], "vs_clean": cmp}

    # (2) re-index of modified files killed N times
    relib = work / "reindex"
    shutil.copytree(work / "clean", relib)  # the library holds absolute paths: same folder, same keys
    texty = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".md", ".txt", ".markdown", ".html"))
    modified = texty[: max(1, len(list(folder.iterdir())) // 3)]
    markers = {}
    for i, p in enumerate(modified):
        marker = f"Robustness marker sentence number {i} says zebra{i}quartz was appended here."
        with open(p, "a", encoding="utf-8") as fh:
            fh.write("\n\n" + marker + "\n")
        markers[str(p.resolve())] = f"zebra{i}quartz"
    clean2 = run_index(work / "clean2", folder)
    ref2 = reader.snapshot(work / "clean2", queries)
    old_texts = ref["texts"]
    new_texts = ref2["texts"]
    mod_keys = {k for k in markers if k in old_texts}
    if len(mod_keys) != len(markers):  # paths as the store spells them
        byname = {Path(p).name: p for p in old_texts}
        markers = {byname.get(Path(k).name, k): v for k, v in markers.items()}
    reruns, versions_lost, files_unsearchable, checks = [], 0, 0, 0
    expected2 = startup + max(1.0, clean2["seconds"] - startup) * len(modified) / max(1, len(ref["files"]))
    attempts = 0
    while sum(1 for r in reruns if r["killed"]) < kills and attempts < 3 * kills:
        attempts += 1
        delay = rng.uniform(0.2, expected2)
        r = run_index(relib, folder, kill_after=delay)
        snap = reader.snapshot(relib)
        checks += 1
        unsearchable = [p for p in ref_searchable(ref) if snap["files"].get(p, ("missing",))[0] not in ("done", "stale")]
        files_unsearchable += len(unsearchable)
        lost, old_n, new_n = [], 0, 0
        for p in markers:
            t = snap["texts"].get(p)
            if t == new_texts.get(p):
                new_n += 1
            elif t == old_texts.get(p):
                old_n += 1
            else:
                lost.append(p)
        versions_lost += len(lost)
        reruns.append({"delay_s": round(delay, 2), "killed": r["killed"], "modified_old": old_n, "modified_new": new_n,
                       "versions_lost": lost, "unsearchable": unsearchable,
                       "vectors_vs_chunks": [snap["counts"]["vectors"], snap["counts"]["chunks"]], "error": r["stderr"]})
        if not r["killed"]:  # finished: back to the old versions indexed, for another trial
            shutil.rmtree(relib)
            shutil.copytree(work / "clean", relib)
            reruns[-1]["finished_before_kill: library reset to the old versions"] = True
    final2 = run_index(relib, folder)
    out["reindex"] = {"modified_files": len(markers), "expected_s": round(expected2, 2),
                      "kills": sum(1 for r in reruns if r["killed"]), "checks": checks, "runs": reruns,
                      "versions_lost": versions_lost, "unsearchable_at_checks": files_unsearchable,
                      "final_run_s": final2["seconds"], "final_returncode": final2["returncode"],
                      "vs_clean": compare(reader.snapshot(relib, queries), ref2)}
    return out


def ref_searchable(ref: dict[str, Any]) -> list[str]:
    return sorted(p for p, v in ref["files"].items() if v[0] in ("done", "stale"))


# ---------------------------------------------------------------- app mode


def app_mode(folder: Path, work: Path, kills: int, rng: random.Random, reader: Reader,
             ref: dict[str, Any] | None, queries: list[str], expected: float = 20.0) -> dict[str, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from edgechat.core.records import FileState
    from edgechat.ui.mainwindow import MainWindow
    from edgechat.ui.settings import AppSettings
    from edgechat.ui.workers import EngineProcess

    if ref is None:
        run_index(work / "clean", folder)
        ref = reader.snapshot(work / "clean", queries)
    total = len(ref["files"])
    app = QApplication.instance() or QApplication([])

    def wait(cond, timeout: float) -> bool:
        return pump(app, cond, timeout, poll=0.02)

    qs = QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat)
    AppSettings(model="extractive").save(qs)
    w = MainWindow(work / "app-library", qsettings=qs)
    w.show()
    assert isinstance(w.workers, EngineProcess)
    t0 = time.perf_counter()
    wait(lambda: w.engine_ready, 120)
    latest: dict[str, Any] = {"files": []}
    w.workers.index.sig_files.connect(lambda listing: latest.__setitem__("files", list(listing.files)))

    def with_state() -> int:
        return sum(1 for f in latest["files"] if f.state in (FileState.DONE, FileState.STALE, FileState.FAILED))

    w.add_paths([str(folder)])
    kill_log = []
    for _ in range(kills):
        delay = rng.uniform(1.0, max(2.0, expected / kills))  # spread over the whole index
        wait(lambda: False, delay)
        pid = w.workers.process.pid
        before = with_state()
        os.kill(pid, signal.SIGKILL)
        t = time.perf_counter()
        ok = wait(lambda: w.engine_ready and w.workers.process.pid != pid, 120)
        kill_log.append({"delay_s": round(delay, 2), "files_with_state_before": before,
                         "restarted": ok, "restart_s": round(time.perf_counter() - t, 2)})
        if not ok:
            break
        # The window gives up after 3 restarts of its engine in a row (MainWindow._restarts): reset it so
        # every kill here is survivable; the JSON says so.
        w._restarts = 0
        w.add_paths([str(folder)])
    done = wait(lambda: with_state() >= total and w.workers.pending() == 0, 600)
    wait(lambda: False, 2.0)
    elapsed = time.perf_counter() - t0
    w.close()
    wait(lambda: not w.workers.running, 30)
    got = reader.snapshot(work / "app-library", queries)
    return {"kills": len(kill_log), "kill_log": kill_log, "finished": done, "seconds": round(elapsed, 1),
            "window_restart_cap": "3 in a row, reset by this script after each restart", "vs_clean": compare(got, ref)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--folder", type=Path, help="documents to index (default: ~30 copied from the corpus)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--app", action="store_true", help="app mode only: the window and its engine process")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="edgechat-kill-"))
    os.environ.setdefault("EDGECHAT_HOME", str(Path.home() / ".local/share/EdgeChat"))
    try:
        src = args.folder or default_folder(work / "src", rng)
        folder = work / "docs"
        shutil.copytree(src, folder)  # the re-index variant edits files: never the user's
        folder = folder.resolve()
        reader = Reader()
        t0 = time.perf_counter()
        result: dict[str, Any] = {"folder": str(src), "seed": args.seed, "kills_asked": args.kills,
                                  "documents": len(list(folder.iterdir()))}
        if args.app:
            clean = run_index(work / "clean", folder)
            queries = queries_from(reader.snapshot(work / "clean"), rng)
            ref = reader.snapshot(work / "clean", queries)
            result["clean_index_s"] = clean["seconds"]
            result["app"] = app_mode(folder, work, args.kills, rng, reader, ref, queries, clean["seconds"])
        else:
            result["cli"] = cli_mode(folder, work, args.kills, rng, reader)
        result["seconds"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(with_provenance(result), indent=1, default=str))
    finally:
        if args.keep:
            print(f"work folder: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
