"""Every benchmark from one command: a table on the terminal and one JSON file.

    python -m benchmarks                 # the full run (tens of minutes; the lead runs it on a quiet machine)
    python -m benchmarks --smoke         # a tiny version of every part (about 3 minutes once the caches exist)
    python -m benchmarks --publish       # ... and write docs/performance.json, docs/performance.png and
                                         #     the tables of docs/performance.md and README.md

Each part runs as its own process (clean peak-memory figures; one failing part does not stop
the others) and writes its own JSON into OUT/parts/<part>.<repeat>.json (logs beside it).
`--resume` keeps the parts already written, so an interrupted run picks up where it stopped;
`--only`/`--skip` choose parts; `--merge-only` just merges what is there. The merged file
OUT/results.json holds the machine description and versions, every part's raw output, and the
headline figures, each as median, min and max over the repeated runs (a part that repeats
internally, like the peer's indexing or the language-model rounds, reports its own spread).

Parts:
  indexing        benchmarks.indexing: the Debian manuals, wall time, pages/s, chunks/s, peak
                  memory, the embedding-only ceiling, re-index unchanged / one changed / one removed
  pipeline        benchmarks.pipeline_overlap: the three R manuals indexed as the app indexes them
                  (library opened first), as a share of the embed-only ceiling, 7 runs
  embedder        benchmarks.embedder_speed: tokens/s of the app's embedder against the earlier one
                  (int8, one text per run), the plain fp32 graph and sentence-transformers on torch (the peer's
                  virtualenv), same texts, same run; vectors alone vs in a batch; SciFact dense nDCG@10
  quality         benchmarks.retrieval_quality: SciFact dev, BM25, dense, RRF and EdgeChat's hybrid
  rerank          benchmarks.rerank_quality: hybrid + each reranker
  latency         benchmarks.latency_scale --parts scale: retrieval latency at 1k-500k chunks, per leg
  memory          benchmarks.latency_scale --parts memory: peak memory, model + 10k library loaded
  llm             benchmarks.latency_scale --parts llm: TTFT and tokens/s, EdgeChat vs bare loop
  gui             benchmarks/gui_responsiveness.py: launch-to-window, GUI stalls (offscreen Qt)
  peer_indexing   benchmarks.peer --parts indexing: EdgeChat vs LangChain indexing + answer latency,
                  the tutorial both with EdgeChat's embedder and as its users run it (HuggingFace)
  peer_quality    benchmarks.peer --parts quality: SciFact nDCG@10 through both
  sec10q          benchmarks.sec10q_retrieval: sec10q-dev filings, document hit@5, document
                  precision@5 and figure recall@5 per question type (skipped without the data)
  answers         benchmarks.answers: the held-out questions of four kinds of documents, what was
                  shown sorted into correct / wrong or partial / declined (EVALUATION.md's classes)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import SHARED, machine, with_provenance

DEBIAN = SHARED / "corpus" / "pdf" / "debian"
SCIFACT = SHARED / "eval" / "scifact-dev"


@dataclass
class Part:
    name: str
    argv: list[str]  # after the python executable
    repeats: int  # separate processes; 1 when the part repeats internally or is deterministic
    timeout: float
    stdout_json: bool = False  # the part prints its JSON on stdout instead of writing --out


def plan(args) -> list[Part]:
    smoke = args.smoke
    r = args.repeats
    py_m = ["-m"]
    if smoke:
        from benchmarks.smoke_data import smoke_beir_folder, smoke_gui_folder, smoke_pdf_folder

        folder = str(smoke_pdf_folder())
        beir = str(smoke_beir_folder())
        t = 600
        return [
            Part("indexing", py_m + ["benchmarks.indexing", folder, "--repeats", "1", "--queries", "1"], r, t),
            Part("pipeline", py_m + ["benchmarks.pipeline_overlap", folder, "--repeats", "1",
                                     "--variants", "sequential@2/2"], 1, t),
            Part("embedder", py_m + ["benchmarks.embedder_speed", "--texts", "20", "--repeats", "1",
                                     "--variants", "int8_single_before,int8_lanes", "--invariance-texts", "10"], 1, t),
            Part("quality", py_m + ["benchmarks.retrieval_quality", beir], 1, t),
            Part("rerank", py_m + ["benchmarks.rerank_quality", beir, "--mmr-lambdas", "0.85"], 1, t),
            Part("latency", py_m + ["benchmarks.latency_scale", "--parts", "scale", "--sizes", "300,1000",
                                    "--base", "200", "--rounds", "1", "--corpus", folder], r, t),
            Part("memory", py_m + ["benchmarks.latency_scale", "--parts", "memory", "--sizes", "300",
                                   "--memory-size", "300", "--base", "200", "--corpus", folder,
                                   "--new-tokens", "8"], 1, t),
            Part("llm", py_m + ["benchmarks.latency_scale", "--parts", "llm", "--llm-rounds", "2",
                                "--new-tokens", "16", "--prompt-tokens", "200"], 1, t),
            Part("gui", ["benchmarks/gui_responsiveness.py", "--corpus", str(smoke_gui_folder()), "--questions", "1",
                         "--launches", "1", "--extractive", "--max-seconds", "30"], 1, t, stdout_json=True),
            Part("peer_indexing", py_m + ["benchmarks.peer", "--parts", "indexing", "--folder", folder,
                                          "--repeats", str(r), "--rounds", "1"], 1, t),
            Part("peer_quality", py_m + ["benchmarks.peer", "--parts", "quality", "--beir", beir], 1, t),
            Part("sec10q", py_m + ["benchmarks.sec10q_retrieval", "--smoke"], 1, t),
            Part("answers", py_m + ["benchmarks.answers", "--sets", "manuals", "--model", "extractive",
                                    "--limit", "4"], 1, t),
        ]
    folder = str(Path(args.folder).resolve())
    beir = str(Path(args.beir).resolve())
    t = 4 * 3600
    return [
        Part("indexing", py_m + ["benchmarks.indexing", folder, "--repeats", "1"], r, t),
        Part("pipeline", py_m + ["benchmarks.pipeline_overlap", "--repeats", str(2 * r + 3),
                                 "--variants", "sequential@2/2"], 1, t),
        Part("embedder", py_m + ["benchmarks.embedder_speed", "--texts", "300", "--repeats", "5",
                                 "--variants", "int8_single_before,int8_lanes,fp32_plain_single",
                                 "--st-python", "peer", "--quality",
                                 "--quality-variants", "int8_single_before,int8_lanes"], 1, t),
        Part("quality", py_m + ["benchmarks.retrieval_quality", beir], 1, t),
        Part("rerank", py_m + ["benchmarks.rerank_quality", beir], 1, t),
        Part("latency", py_m + ["benchmarks.latency_scale", "--parts", "scale", "--corpus", folder], r, t),
        Part("memory", py_m + ["benchmarks.latency_scale", "--parts", "memory", "--corpus", folder], r, t),
        Part("llm", py_m + ["benchmarks.latency_scale", "--parts", "llm", "--llm-rounds", str(2 * r + 2)], 1, t),
        Part("gui", ["benchmarks/gui_responsiveness.py", "--corpus", folder, "--questions", "2",
                     "--launches", str(max(3, r))], 1, t, stdout_json=True),
        Part("peer_indexing", py_m + ["benchmarks.peer", "--parts", "indexing", "--folder", folder,
                                      "--repeats", str(r), "--peer-embeddings", "edgechat,hf"], 1, t),
        Part("peer_quality", py_m + ["benchmarks.peer", "--parts", "quality", "--beir", beir], 1, t),
        Part("sec10q", py_m + ["benchmarks.sec10q_retrieval"], 1, t),
        Part("answers", py_m + ["benchmarks.answers", "--split", "heldout", "--model", "extractive,active"], 1, t),
    ]


def run_part(part: Part, i: int, parts_dir: Path, resume: bool) -> dict:
    out = parts_dir / f"{part.name}.{i}.json"
    log = parts_dir / f"{part.name}.{i}.log"
    if resume and out.is_file():
        try:
            return {"status": "kept", "data": json.loads(out.read_text())}
        except ValueError:
            pass
    argv = [sys.executable, *part.argv]
    if not part.stdout_json:
        argv += ["--out", str(out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    t = time.perf_counter()
    print(f"[{time.strftime('%H:%M:%S')}] {part.name} ({i + 1}/{part.repeats}): "
          f"{shlex.join(['python', *part.argv])}", file=sys.stderr, flush=True)
    try:
        with open(log, "w") as lf:
            r = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=lf, text=True,
                               timeout=part.timeout)
        lf_text = r.stdout
        with open(log, "a") as lf:
            lf.write("\n--- stdout ---\n" + lf_text[-20000:])
        seconds = time.perf_counter() - t
        if r.returncode != 0:
            return {"status": "failed", "error": f"exit {r.returncode}; see {log}", "seconds": seconds}
        if part.stdout_json:
            text = lf_text.strip()
            data = json.loads(text[text.index("{"):])
            out.write_text(json.dumps(data, indent=2))
        data = json.loads(out.read_text())
        print(f"    done in {seconds:.0f} s", file=sys.stderr, flush=True)
        return {"status": "ok", "data": data, "seconds": seconds}
    except subprocess.TimeoutExpired:
        return {"status": "failed", "error": f"timed out after {part.timeout:.0f} s; see {log}"}
    except (OSError, ValueError) as e:
        return {"status": "failed", "error": f"{type(e).__name__}: {e}; see {log}"}


def merge(parts: list[Part], outcomes: dict[str, list[dict]], meta: dict) -> dict:
    from benchmarks.readme_table import headline

    merged = dict(meta)
    merged["parts"] = {}
    for p in parts:
        runs = outcomes.get(p.name, [])
        merged["parts"][p.name] = {
            "command": shlex.join(["python", *p.argv]),
            "repeats": p.repeats,
            "status": [o["status"] for o in runs],
            "errors": [o["error"] for o in runs if o.get("error")],
            "seconds": [round(o["seconds"], 1) for o in runs if o.get("seconds")],
            "runs": [o["data"] for o in runs if "data" in o],
        }
    merged["figures"] = headline(merged)
    return merged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="a tiny, fast version of every part")
    ap.add_argument("--repeats", type=int, default=None, help="repeated runs (default 3; 1 with --smoke)")
    ap.add_argument("--folder", default=str(DEBIAN), help="PDF folder to index (default: the Debian manuals)")
    ap.add_argument("--beir", default=str(SCIFACT), help="BEIR folder for retrieval quality (SciFact dev)")
    ap.add_argument("--out", help="output folder (default benchmarks/results/full or .../smoke)")
    ap.add_argument("--only", help="comma-separated parts to run")
    ap.add_argument("--skip", default="", help="comma-separated parts to leave out")
    ap.add_argument("--resume", action="store_true", help="keep parts already written in OUT/parts")
    ap.add_argument("--merge-only", action="store_true", help="merge the parts already written, run nothing")
    ap.add_argument("--note", default="", help="a remark kept in the JSON and shown in the README (e.g. machine load)")
    ap.add_argument("--publish", action="store_true",
                    help="write docs/performance.json, docs/performance.png and the tables of docs/performance.md and README.md")
    args = ap.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.smoke else 3
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / ("smoke" if args.smoke else "full")
    parts_dir = out / "parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    all_parts = plan(args)
    names = [p.name for p in all_parts]
    chosen = args.only.split(",") if args.only else names
    unknown = [n for n in chosen + [s for s in args.skip.split(",") if s] if n not in names]
    if unknown:
        ap.error(f"unknown part(s) {unknown}; parts: {', '.join(names)}")
    chosen = [n for n in chosen if n not in args.skip.split(",")]

    t0 = time.time()
    outcomes: dict[str, list[dict]] = {}
    # --only also sets the order the chosen parts run in; the rest keep the plan's order
    order = {n: i for i, n in enumerate(chosen)}
    for p in sorted(all_parts, key=lambda p: order.get(p.name, len(order))):
        runs = []
        for i in range(p.repeats):
            f = parts_dir / f"{p.name}.{i}.json"
            if args.merge_only or p.name not in chosen:
                if f.is_file():
                    runs.append({"status": "kept", "data": json.loads(f.read_text())})
                continue
            o = run_part(p, i, parts_dir, args.resume)
            if o["status"] == "failed":
                print(f"    FAILED: {o['error']}", file=sys.stderr, flush=True)
            runs.append(o)
        outcomes[p.name] = runs

    cmd = "python -m benchmarks" + (" --smoke" if args.smoke else "") + \
          (f" --repeats {args.repeats}" if args.repeats != (1 if args.smoke else 3) else "")
    meta = {
        "schema": 1,
        "command": cmd,
        "smoke": args.smoke,
        "note": args.note,
        "repeats": args.repeats,
        "folder": None if args.smoke else str(Path(args.folder).resolve()),
        "beir": None if args.smoke else str(Path(args.beir).resolve()),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t0)),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        "wall_seconds": round(time.time() - t0, 1),
        "machine": machine(),
        "git_commit": _git_commit(),
    }
    meta = with_provenance(meta)  # the load average before the run: taken when benchmarks.common was imported
    if args.merge_only:  # the run's span is that of the part files it merges
        stamps = [f.stat().st_mtime for f in parts_dir.glob("*.json")]
        logs = [f.stat().st_mtime for f in parts_dir.glob("*.log")]
        if stamps:
            first = min(logs + stamps)
            meta["started"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(first))
            meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(max(stamps)))
            meta["wall_seconds"] = round(max(stamps) - first, 1)
            meta["merged_only"] = True
    merged = merge(all_parts, outcomes, meta)
    result_file = out / "results.json"
    result_file.write_text(json.dumps(merged, indent=2, default=str))

    from benchmarks.readme_table import render_text

    print(render_text(merged))
    print(f"\nJSON: {result_file}")
    failed = [n for n, runs in outcomes.items() if any(o["status"] == "failed" for o in runs)]
    if failed:
        print(f"failed parts: {', '.join(failed)} (logs in {parts_dir})")
    if args.publish:
        from benchmarks import plot, readme_table

        docs = ROOT / "docs"
        docs.mkdir(exist_ok=True)
        (docs / "performance.json").write_text(json.dumps(merged, indent=2, default=str))
        plot.main([str(docs / "performance.json"), str(docs / "performance.png")])
        readme_table.main([str(docs / "performance.json"), "--update"])
        print("published: docs/performance.json, docs/performance.png, the tables of docs/performance.md and README.md")
    return 1 if failed else 0


def _git_commit() -> str | None:
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + ("+dirty" if dirty else "") if r.returncode == 0 else None
    except OSError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
