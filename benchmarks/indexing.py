"""Indexing speed against the embedding-only ceiling, incremental re-indexing, and retrieval
latency at the resulting size.

    python -m benchmarks.indexing [FOLDER] [--repeats 1] [--out FILE.json]

Default folder: ../shared/data/corpus/pdf/debian. Each repeat indexes into a fresh library.
The ceiling embeds exactly the texts the pipeline gave the embedder (each chunk with its context
header), in the same batches, alone, in a tight loop, in the same process: pipeline chunks/s
divided by ceiling chunks/s is the fraction of the embedder's speed the whole pipeline (parse +
chunk + embed + store) reaches.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import DEBIAN_QUERIES as QUERIES
from benchmarks.common import SHARED, RecordingEmbedder, emit, machine, peak_rss_mb, replay_alone, summary
from edgechat.core.embedding import load_default_embedder
from edgechat.core.engine import Engine


def index_once(folder: Path, embedder, workdir: Path) -> dict:
    lib = workdir / f"lib-{time.time_ns()}"
    recorder = RecordingEmbedder(embedder)
    with Engine(lib, embedder=recorder) as engine:
        t = time.perf_counter()
        s = engine.index([folder])
        wall = time.perf_counter() - t
    return {"library": lib, "wall": wall, "summary": s, "batches": recorder.batches}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(SHARED / "corpus" / "pdf" / "debian"))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--queries", type=int, default=5, help="repeats of the query set for latency")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    folder = Path(args.folder).resolve()
    embedder = load_default_embedder()
    work = Path(tempfile.mkdtemp(prefix="edgechat-bench-"))
    runs = []
    try:
        for _ in range(args.repeats):
            r = index_once(folder, embedder, work)
            c, _ = replay_alone(embedder, r["batches"])
            n_texts = sum(len(b) for b in r["batches"])
            s = r["summary"]
            runs.append({
                "wall_s": r["wall"],
                "files": len(s.indexed),
                "failed": len(s.failed),
                "pages": s.pages_added,
                "chunks": s.chunks_added,
                "pages_per_s": s.pages_added / r["wall"],
                "chunks_per_s": s.chunks_added / r["wall"],
                "embed_in_pipeline_s": s.embed_seconds,
                "ceiling_s": c,
                "ceiling_chunks_per_s": n_texts / c,
                "fraction_of_ceiling": c / r["wall"],
                "library": r["library"],
            })
        lib = runs[-1]["library"]
        with Engine(lib, embedder=embedder) as engine:
            # Re-index unchanged.
            t = time.perf_counter()
            s = engine.index([folder])
            unchanged = {"wall_s": time.perf_counter() - t, "embedded": s.embedded, "unchanged": s.unchanged}
            # Retrieval latency at this size.
            engine.parts.retriever.search("warm up")
            lat = []
            for _ in range(args.queries):
                for q in QUERIES:
                    t = time.perf_counter()
                    engine.parts.retriever.search(q)
                    lat.append(1000 * (time.perf_counter() - t))
            # Exact-search recall of the HNSW index (vector leg) against brute force.
            import numpy as np

            ids, vecs = engine.parts.store.stored_vectors()
            recalls = []
            for q in QUERIES:
                qv = embedder.embed([q])[0]
                exact = [ids[i] for i in np.argsort(-(vecs @ qv))[:10]]
                got = [cid for cid, _ in engine.parts.store.vector_search(qv, 10)]
                recalls.append(len(set(exact) & set(got)) / 10)
            counts = engine.parts.store.counts()
        # One file changed, one removed: on a copy so the shared folder stays untouched.
        copy = work / "copy"
        shutil.copytree(folder, copy)
        with Engine(work / "lib-copy", embedder=embedder) as engine:
            engine.index([copy])
            files = sorted(p for p in copy.rglob("*") if p.is_file())
            smallest = min(files, key=lambda p: p.stat().st_size)
            with open(smallest, "ab") as fh:
                fh.write(b"\n% edited\n")
            t = time.perf_counter()
            s = engine.index([copy])
            changed = {"wall_s": time.perf_counter() - t, "reindexed": len(s.indexed), "embedded": s.embedded, "file": smallest.name}
            files.remove(smallest)
            removed = None  # (a folder of one file has no other to remove)
            if files:
                files[0].unlink()
                t = time.perf_counter()
                s = engine.index([copy])
                removed = {"wall_s": time.perf_counter() - t, "removed": len(s.removed), "embedded": s.embedded}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in runs:
        r.pop("library")
    keys = ["wall_s", "pages_per_s", "chunks_per_s", "ceiling_chunks_per_s", "fraction_of_ceiling"]
    result = {
        "benchmark": "indexing",
        "folder": str(folder),
        "machine": machine(),
        "runs": runs,
        "figures": {k: summary([r[k] for r in runs]) for k in keys},
        "reindex_unchanged": unchanged,
        "reindex_one_changed": changed,
        "reindex_one_removed": removed,
        "retrieval_latency_ms": summary(lat),
        "vector_recall_at_10_vs_exact": sum(recalls) / len(recalls),
        "library": counts,
        "peak_rss_mb": peak_rss_mb(),
    }
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
