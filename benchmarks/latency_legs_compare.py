"""Before/after of the retrieval legs at scale, interleaved in one process on the
libraries benchmarks.latency_scale caches: the search as it was (the lexical leg's plain OR with
a chunk-row join before the LIMIT and bm25() computed twice; a Chroma count() before every HNSW
query) against the search as it is, each query run through both in alternating order, plus how
many of the top 10 they share (hybrid, and the lexical leg alone).

    python -m benchmarks.latency_legs_compare [--sizes 50000,200000,500000] [--rounds 3]
                                              [--budgets 5000,10000] [--out FILE.json]

Run benchmarks.latency_scale first (it builds the libraries); the same --corpus/--base/--per-file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import edgechat.core  # noqa: F401
from benchmarks.common import DEBIAN_QUERIES as QUERIES
from benchmarks.common import SHARED, emit, machine, summary

ROOT = Path(__file__).resolve().parents[1]


class BeforeStore:
    """The Store's search methods as they were before the lexical leg was bounded and the count
    dropped; the rest delegated."""

    def __init__(self, store) -> None:
        self._s = store

    def __getattr__(self, name):
        return getattr(self._s, name)

    def vector_search(self, query_vec, k, file_ids=None):
        if self._s.open_vectors().collection.count() == 0:  # what ChromaVectorIndex.query did first
            return []
        return self._s.vector_search(query_vec, k, file_ids)

    def lexical_search_words(self, words, k, file_ids=None, weights=(1.0, 0.5, 0.5, 0.5), budget=0):
        from edgechat.core.search.retrieval import fts_query

        match = fts_query(words)
        if not match:
            return []
        w = ", ".join(str(float(x)) for x in list(weights)[:4])
        sql = (f"SELECT c.chunk_id, -bm25(chunks_fts, {w}) AS s FROM chunks_fts "
               "JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
               f" ORDER BY bm25(chunks_fts, {w}) LIMIT ?")
        with self._s._db_lock:
            return [(r[0], float(r[1])) for r in self._s.db.execute(sql, (match, k))]


def probe(lib: Path, rounds: int, budgets: list[int]) -> dict:
    from edgechat.core.embedding import load_default_embedder
    from edgechat.core.engine import Engine
    from edgechat.core.search.retrieval import RetrievalSettings, Retriever

    emb = load_default_embedder()
    with Engine(lib, embedder=emb) as engine:
        store = engine.parts.store
        variants = {"before": Retriever(BeforeStore(store), emb, RetrievalSettings(lexical_budget=0))}  # type: ignore[arg-type]
        variants["after, plain OR"] = Retriever(store, emb, RetrievalSettings(lexical_budget=0))
        for b in budgets:
            variants[f"after, budget {b}"] = Retriever(store, emb, RetrievalSettings(lexical_budget=b))
        for q in QUERIES[:3]:
            for r in variants.values():
                r.search(q)
        lat: dict[str, dict[str, list[float]]] = {k: {} for k in variants}
        agree: dict[str, dict[str, list[float]]] = {k: {"hybrid": [], "lexical": []} for k in variants}
        names = list(variants)
        for rnd in range(rounds):
            for i, q in enumerate(QUERIES):
                order = names if (rnd + i) % 2 == 0 else names[::-1]
                res = {}
                for k in order:
                    t = time.perf_counter()
                    out = variants[k].search(q)
                    total = time.perf_counter() - t
                    res[k] = out
                    for leg, v in [*out.timings.items(), ("total", total)]:
                        lat[k].setdefault(leg, []).append(1000 * v)
                ref = res["before"].candidates
                ref_h = {c.chunk_id for c in ref[:10]}
                ref_l = {c.chunk_id for c in sorted((c for c in ref if c.lexical_rank), key=lambda c: c.lexical_rank)[:10]}
                for k, out in res.items():
                    got = out.candidates
                    agree[k]["hybrid"].append(len(ref_h & {c.chunk_id for c in got[:10]}) / max(1, len(ref_h)))
                    lex = {c.chunk_id for c in sorted((c for c in got if c.lexical_rank), key=lambda c: c.lexical_rank)[:10]}
                    agree[k]["lexical"].append(len(ref_l & lex) / max(1, len(ref_l)))
        chunks = store.counts()["chunks"]
    out: dict = {"chunks": chunks, "queries_per_variant": rounds * len(QUERIES), "variants": {}}
    for k in variants:
        legs = {leg: {"median": round(statistics.median(v), 3), "p95": round(summary(v)["p95"], 3)} for leg, v in lat[k].items()}
        out["variants"][k] = {"ms": legs, "top10_shared_with_before": {a: round(statistics.mean(v), 3) for a, v in agree[k].items()}}
    b = out["variants"]["before"]["ms"]["total"]
    for k, v in out["variants"].items():
        v["speedup_median"] = round(b["median"] / v["ms"]["total"]["median"], 2)
        v["speedup_p95"] = round(b["p95"] / v["ms"]["total"]["p95"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50000,200000,500000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budgets", default="5000,10000")
    ap.add_argument("--corpus", default=str(SHARED / "corpus" / "pdf" / "debian"))
    ap.add_argument("--base", type=int, default=3000)
    ap.add_argument("--per-file", type=int, default=200)
    ap.add_argument("--library", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",") if b]
    if args.library:
        print(json.dumps(probe(Path(args.library), args.rounds, budgets)))
        return 0
    from benchmarks.latency_scale import build_libraries
    from edgechat.core.embedding import load_default_embedder

    sizes = sorted(int(s) for s in args.sizes.split(","))
    args.fresh = False
    cache, _, _ = build_libraries(args, load_default_embedder(), sizes)
    result: dict = {"benchmark": "latency_legs_compare", "machine": machine(), "library_cache": str(cache), "sizes": {}}
    for size in sizes:
        cmd = [sys.executable, "-m", "benchmarks.latency_legs_compare", "--library", str(cache / f"size-{size}"),
               "--rounds", str(args.rounds), "--budgets", args.budgets]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
        if r.returncode != 0:
            raise RuntimeError(f"compare failed at {size}: {r.stderr[-2000:]}")
        result["sizes"][str(size)] = res = json.loads(r.stdout.strip().splitlines()[-1])
        for k, v in res["variants"].items():
            t = v["ms"]["total"]
            print(f"latency_legs_compare: {size}: {k}: {t['median']:.1f} / {t['p95']:.1f} ms, top10 shared "
                  f"{v['top10_shared_with_before']}", file=sys.stderr)
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
