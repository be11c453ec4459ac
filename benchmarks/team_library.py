"""A team library against a local one: retrieval quality on SciFact through a `chroma run`
server, the time to publish a library to the server, and how long a search takes.

    python -m benchmarks.team_library [BEIR_DIR] [--split train] [--limit N] [--out results.json]

The corpus is indexed once into the cached local library of benchmarks.retrieval_quality. Its
SQLite (with the vectors) is copied as the indexing desktop's cache of a team library on a fresh
`chroma run` on loopback, and sent to the server (TeamStore.sync_vectors, what the indexing
desktop does after an interrupted run: every passage with its vector, text and metadata, then
each file record). A second desktop (another user, an empty cache) pulls the library from the
server and answers the queries: the lexical leg on its cache, the vector leg on the server.
Prints JSON (benchmarks.common.with_provenance).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import with_provenance
from benchmarks.evaluation import load_beir
from benchmarks.retrieval_quality import DEFAULT, build_library, run_mode
from edgechat.core.engine import Engine, Identity, TeamAddress
from edgechat.core.store.team import TeamStore


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(DEFAULT))
    ap.add_argument("--split", default="train")
    ap.add_argument("--modes", default="lexical,vector,hybrid")
    ap.add_argument("--limit", type=int, default=0, help="only the first N queries (smoke runs)")
    ap.add_argument("--out", help="write the JSON here too")
    args = ap.parse_args(argv)
    from tests.chroma_server import ChromaServer  # the tests' launcher of `chroma run`

    folder = Path(args.folder)
    beir = load_beir(folder, args.split, args.limit)
    local = build_library(folder, beir)
    results: dict[str, dict] = {"local": {}, "team": {}}
    with local:
        embedder = local.embedder
        for mode in args.modes.split(","):
            results["local"][mode] = run_mode(local, beir, mode)
        source = local.library_dir / "library.sqlite3"
        passages = local.parts.store.counts()["chunks"]
        work = Path(tempfile.mkdtemp(prefix="edgechat-team-bench-"))
        try:
            with ChromaServer(work / "server") as server:
                address = TeamAddress.parse(server.library("scifact"))
                assert address is not None
                writer_cache = work / "indexer"
                writer_cache.mkdir()
                for suffix in ("", "-wal", "-shm"):
                    if Path(f"{source}{suffix}").exists():
                        shutil.copy(f"{source}{suffix}", writer_cache / f"library.sqlite3{suffix}")
                t = time.perf_counter()
                with TeamStore(address, Identity("indexer"), cache_dir=writer_cache) as store:
                    sent = store.sync_vectors()["added"]
                publish_s = time.perf_counter() - t
                print(f"sent {sent} passages to the server in {publish_s:.0f} s", file=sys.stderr)
                with Engine(str(address), embedder=embedder, identity=Identity("reader"), readonly=True) as team:
                    t = time.perf_counter()
                    team.parts.store.pull()
                    pull_s = time.perf_counter() - t
                    print(f"pulled into an empty cache in {pull_s:.0f} s", file=sys.stderr)
                    for mode in args.modes.split(","):
                        results["team"][mode] = run_mode(team, beir, mode)
                    settings = vars(team.parts.retriever.settings)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    out = {
        "benchmark": "team_library",
        "dataset": str(folder),
        "split": args.split,
        "queries": len(beir.queries),
        "documents": len(beir.corpus),
        "passages": passages,
        "publish": {"passages": sent, "seconds": round(publish_s, 2), "passages_per_s": round(sent / publish_s, 1)},
        "pull_into_empty_cache_s": round(pull_s, 2),
        "settings": settings,
        "results": results,
        "ndcg@10_team_minus_local": {m: round(results["team"][m]["ndcg@10"] - results["local"][m]["ndcg@10"], 4)
                                     for m in results["team"]},
    }
    print(f"{'mode':8s} {'where':6s} {'nDCG@10':>8s} {'R@100':>7s} {'p50 ms':>7s} {'p95 ms':>7s}", file=sys.stderr)
    for where, rs in results.items():
        for mode, r in rs.items():
            print(f"{mode:8s} {where:6s} {r['ndcg@10']:8.4f} {r['recall@100']:7.4f} {r['latency_ms_median']:7.1f} "
                  f"{r['latency_ms_p95']:7.1f}", file=sys.stderr)
    text = json.dumps(with_provenance(out), indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
