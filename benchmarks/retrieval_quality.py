"""Retrieval quality on any BEIR-format folder: nDCG@10, Recall@10, Recall@100, MRR@10 for
BM25, dense and hybrid, through EdgeChat's own store and retriever.

    python -m benchmarks.retrieval_quality [BEIR_DIR] [--split train] [--out results.json]

The corpus is indexed once into a cached library (keyed by the corpus file and chunk settings)
under the user cache, so reruns only query. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import with_provenance
from benchmarks.evaluation import beir_documents, dedupe_docs, load_beir, score_run
from edgechat.core import paths
from edgechat.core.engine import Engine

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "eval" / "scifact-dev"


def library_for(folder: Path) -> Path:
    h = hashlib.sha1()
    h.update(str(folder.resolve()).encode())
    h.update(str((folder / "corpus.jsonl").stat().st_size).encode())
    return paths.cache_dir() / "eval-libraries" / h.hexdigest()[:12]


def build_library(folder: Path, beir, embedder=None) -> Engine:
    lib = library_for(folder)
    if (lib / "library.sqlite3").exists():
        engine = Engine(lib, embedder=embedder, readonly=True)
        if engine.parts.store.counts()["files_indexed"] >= len(beir.corpus):
            return engine  # complete: open it read-only so several evaluations can share it
        engine.close()
    engine = Engine(lib, embedder=embedder)
    if engine.parts.store.counts()["files_indexed"] < len(beir.corpus):
        t = time.perf_counter()
        print(f"indexing {len(beir.corpus)} documents into {lib} (once)...", file=sys.stderr)
        done = {f.path for f in engine.parts.store.files() if f.state == "done"}
        todo = ((k, d) for k, d in beir_documents(beir) if k not in done)
        s = engine.add_documents(todo, total=len(beir.corpus) - len(done))
        print(f"indexed in {time.perf_counter() - t:.0f} s ({s.chunks_added} chunks)", file=sys.stderr)
    return engine


def run_mode(engine: Engine, beir, mode: str):
    """mode: lexical | vector | hybrid (EdgeChat's fusion) | hybrid-rrf (plain rank fusion)."""
    retriever = engine.parts.retriever
    if mode == "hybrid-rrf":
        from dataclasses import replace

        retriever.settings = replace(retriever.settings, fusion="rrf")
        mode = "hybrid"
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    for qid, text in beir.queries.items():
        t = time.perf_counter()
        cands = retriever.search(text, mode=mode).candidates
        latencies.append(time.perf_counter() - t)
        run[qid] = dedupe_docs(c.path for c in cands)
    scores = score_run(run, beir.qrels)
    latencies.sort()
    scores["latency_ms_median"] = 1000 * statistics.median(latencies)
    scores["latency_ms_p95"] = 1000 * latencies[int(0.95 * (len(latencies) - 1))]
    return scores


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(DEFAULT))
    ap.add_argument("--split", default="train")
    ap.add_argument("--modes", default="lexical,vector,hybrid-rrf,hybrid")
    ap.add_argument("--limit", type=int, default=0, help="only the first N queries (smoke runs)")
    ap.add_argument("--out", help="write the JSON here too")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    beir = load_beir(folder, args.split, args.limit)
    engine = build_library(folder, beir)
    results = {}
    with engine:
        for mode in args.modes.split(","):
            results[mode] = run_mode(engine, beir, mode)
        settings = engine.parts.retriever.settings
        results["hybrid_vs_rrf_ndcg_gain"] = (
            results["hybrid"]["ndcg@10"] - results["hybrid-rrf"]["ndcg@10"]
            if "hybrid" in results and "hybrid-rrf" in results else None
        )
    out = {
        "benchmark": "retrieval_quality",
        "dataset": str(folder),
        "split": args.split,
        "queries": len(beir.queries),
        "documents": len(beir.corpus),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine()},
        "settings": vars(settings),
        "results": results,
    }
    print(f"{'mode':10s} {'nDCG@10':>8s} {'R@10':>7s} {'R@100':>7s} {'MRR@10':>7s} {'p50 ms':>7s} {'p95 ms':>7s}")
    for mode, r in results.items():
        if not isinstance(r, dict):
            continue
        print(f"{mode:10s} {r['ndcg@10']:8.4f} {r['recall@10']:7.4f} {r['recall@100']:7.4f} {r['mrr@10']:7.4f} "
              f"{r['latency_ms_median']:7.1f} {r['latency_ms_p95']:7.1f}")
    text = json.dumps(with_provenance(out), indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
