"""Reranking and diversity on a BEIR folder (SciFact dev by default): nDCG@10, R@10, R@100, MRR@10
and retrieval latency (median, p95) for hybrid retrieval with and without each reranker, and the
effect of MMR selection.

    python -m benchmarks.rerank_quality [BEIR_DIR] [--split train] [--methods none,features,static,maxsim]
                                        [--limit N] [--tune] [--out results.json]

Latency "with" a reranker is the same query's hybrid search time plus that reranker's time,
measured in the same loop, so the machine's load affects both alike. The pipeline reranks the
first `--depth` (50, PipelineSettings.candidates) fused candidates; the rest keep their order.

--tune: grid search of the FeatureReranker weights with 2-fold cross-validation over the
queries (odd/even position), so the reported feature numbers are not fitted on the queries they
are scored on.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

import edgechat.core  # noqa: F401
from benchmarks.common import emit, machine
from benchmarks.evaluation import dedupe_docs, load_beir, ndcg_at, score_run
from benchmarks.rerankers import FeatureReranker, LateInteractionReranker, StaticMaxSimReranker, diversify
from benchmarks.retrieval_quality import DEFAULT, build_library
from edgechat.core.search.mmr import MmrSettings, similarity
from edgechat.core.understanding import ConversationInterpreter


def _copy(cands):
    return [replace(c, metadata=dict(c.metadata)) for c in cands]


def _lat(xs):
    xs = sorted(xs)
    return {"latency_ms_median": 1000 * statistics.median(xs), "latency_ms_p95": 1000 * xs[int(0.95 * (len(xs) - 1))]}


def top5_stats(ranked) -> dict:
    """Distinct documents/pages among the first five chunks and near-duplicate pairs there."""
    top = ranked[:5]
    docs = len({c.path for c in top})
    pages = len({(c.path, c.page) for c in top})
    dup = sum(1 for a, b in itertools.combinations(top, 2) if similarity(a, b) >= 0.6)
    return {"docs": docs, "pages": pages, "dup_pairs": dup}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(DEFAULT))
    ap.add_argument("--split", default="train")
    ap.add_argument("--methods", default="none,features,static,maxsim")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--maxsim-depth", type=int, default=20)
    ap.add_argument("--maxsim-alpha", type=float, default=0.5)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--mmr-lambdas", default="0.7,0.85")
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    folder = Path(args.folder)
    beir = load_beir(folder, args.split, args.limit)
    engine = build_library(folder, beir)
    methods = [m for m in args.methods.split(",") if m]
    rerankers = {}
    if "features" in methods:
        rerankers["features"] = FeatureReranker()
    if "static" in methods:
        rerankers["static"] = StaticMaxSimReranker(engine.embedder)
    if "maxsim" in methods:
        rerankers["maxsim"] = LateInteractionReranker(engine.embedder, depth=args.maxsim_depth, alpha=args.maxsim_alpha)
    interp = ConversationInterpreter(use_model=False)
    retriever = engine.parts.retriever

    runs: dict[str, dict[str, list[str]]] = {"none": {}, "none+interpreter": {}}
    lat: dict[str, list[float]] = {"none": [], "none+interpreter": []}
    ranked_lists: dict[str, dict[str, list]] = {"none": {}}
    for m in rerankers:
        runs[m], lat[m], ranked_lists[m] = {}, [], {}
    feature_cache = {}
    n = len(beir.queries)
    t_all = time.perf_counter()
    with engine:
        for i, (qid, text) in enumerate(beir.queries.items(), 1):
            t = time.perf_counter()
            cands = retriever.search(text).candidates
            t_search = time.perf_counter() - t
            runs["none"][qid] = dedupe_docs(c.path for c in cands)
            lat["none"].append(t_search)
            ranked_lists["none"][qid] = cands[:20]
            # the same query as the pipeline runs it on a first turn (interpreter keywords)
            t = time.perf_counter()
            u = interp.interpret(text, [])
            c2 = retriever.search(u.query or text, keywords=u.keywords or None).candidates
            lat["none+interpreter"].append(time.perf_counter() - t)
            runs["none+interpreter"][qid] = dedupe_docs(c.path for c in c2)
            for name, rr in rerankers.items():
                head = _copy(cands[: args.depth])
                t = time.perf_counter()
                out = rr.rerank(text, head)
                dt = time.perf_counter() - t
                lat[name].append(t_search + dt)
                full = out + cands[args.depth :]
                runs[name][qid] = dedupe_docs(c.path for c in full)
                ranked_lists[name][qid] = full[:20]
            if args.tune:
                feature_cache[qid] = (cands[: args.depth], FeatureReranker().feature_matrix(text, cands[: args.depth]),
                                      dedupe_docs(c.path for c in cands[args.depth :]))  # fmt: skip
            if i % 100 == 0:
                print(f"{i}/{n} queries, {time.perf_counter() - t_all:.0f} s", file=sys.stderr)

    results = {}
    for name in runs:
        results[name] = {**score_run(runs[name], beir.qrels), **_lat(lat[name])}
        if name != "none":
            results[name]["vs_none"] = paired(runs["none"], runs[name], beir.qrels)

    # MMR over the final selection: nDCG@10 of the diversified order, and what the top five hold
    mmr = {}
    for base, lists in ranked_lists.items():
        for lam in [1.0] + [float(x) for x in args.mmr_lambdas.split(",") if x]:
            s = MmrSettings(lam=lam, pool=20)
            run = {}
            stats = {"docs": [], "pages": [], "dup_pairs": []}
            for qid, cl in lists.items():
                d = diversify(cl, s) if lam < 1.0 else cl
                run[qid] = dedupe_docs(c.path for c in d) + [p for p in runs[base][qid] if p not in {c.path for c in d}]
                for k, v in top5_stats(d).items():
                    stats[k].append(v)
            sc = score_run(run, beir.qrels)
            mmr[f"{base}/lambda={lam:g}"] = {"ndcg@10": sc["ndcg@10"], "recall@10": sc["recall@10"],
                                             **{f"top5_{k}_mean": float(np.mean(v)) for k, v in stats.items()}}  # fmt: skip

    tuned = None
    if args.tune:
        tuned = tune_features(feature_cache, beir)

    out = {
        "benchmark": "rerank_quality",
        "dataset": str(folder),
        "split": args.split,
        "queries": n,
        "depth": args.depth,
        "maxsim": {"depth": args.maxsim_depth, "alpha": args.maxsim_alpha},
        "machine": machine(),
        "results": results,
        "mmr": mmr,
        "tuning": tuned,
    }
    print(f"{'method':18s} {'nDCG@10':>8s} {'R@10':>7s} {'R@100':>7s} {'MRR@10':>7s} {'p50 ms':>7s} {'p95 ms':>7s}")
    for name, r in results.items():
        vs = r.get("vs_none")
        extra = (f"  {vs['wins']}+/{vs['losses']}- ci95 [{vs['ci95'][0]:+.4f}, {vs['ci95'][1]:+.4f}]" if vs else "")
        print(f"{name:18s} {r['ndcg@10']:8.4f} {r['recall@10']:7.4f} {r['recall@100']:7.4f} {r['mrr@10']:7.4f} "
              f"{r['latency_ms_median']:7.1f} {r['latency_ms_p95']:7.1f}{extra}")
    print(f"{'mmr':24s} {'nDCG@10':>8s} {'docs@5':>7s} {'pages@5':>7s} {'dups@5':>7s}")
    for name, r in mmr.items():
        print(f"{name:24s} {r['ndcg@10']:8.4f} {r['top5_docs_mean']:7.3f} {r['top5_pages_mean']:7.3f} {r['top5_dup_pairs_mean']:7.3f}")
    emit(out, args.out)
    return 0


def paired(base: dict, other: dict, qrels: dict, k: int = 10, rounds: int = 2000) -> dict:
    """Per-query nDCG@10 differences: wins/losses/ties and a paired bootstrap 95% interval."""
    qs = [q for q in qrels if q in base and q in other]
    d = np.array([ndcg_at(other[q], qrels[q], k) - ndcg_at(base[q], qrels[q], k) for q in qs])
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), size=(rounds, len(d)))].mean(axis=1) if len(d) else np.zeros(1)
    return {"mean_diff": float(d.mean()) if len(d) else 0.0, "wins": int((d > 1e-9).sum()),
            "losses": int((d < -1e-9).sum()), "ties": int((np.abs(d) <= 1e-9).sum()),
            "ci95": [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]}  # fmt: skip


GRID = {
    "vector": [0.0, 0.3, 0.6, 1.0],
    "lexical": [0.0, 0.3],
    "coverage": [0.0, 0.2, 0.5],
    "proximity": [0.0, 0.2, 0.5],
    "pairs": [0.0, 0.1, 0.3],
    "title": [0.0, 0.2],
}


def tune_features(cache: dict, beir) -> dict:
    """2-fold CV grid search of FeatureWeights (fused fixed at 1.0)."""
    qids = list(cache)
    folds = [qids[0::2], qids[1::2]]
    names = list(GRID)
    combos = list(itertools.product(*(GRID[k] for k in names)))

    def score(ws, qs):
        w = np.array([1.0] + list(ws))
        tot = 0.0
        for q in qs:
            cands, X, tail = cache[q]
            s = X @ w
            order = np.argsort(-s, kind="stable")
            ranked = dedupe_docs([cands[i].path for i in order]) + tail
            tot += ndcg_at(ranked, beir.qrels[q], 10)
        return tot / max(1, len(qs))

    base = tuple(0.0 for _ in names)
    report = {"grid": GRID, "folds": []}
    for k in range(2):
        train, test = folds[k], folds[1 - k]
        best = max(combos, key=lambda ws: score(ws, train))
        report["folds"].append({"weights": dict(zip(names, best)), "train_ndcg": score(best, train),
                                "test_ndcg": score(best, test), "test_ndcg_none": score(base, test)})  # fmt: skip
    allbest = max(combos, key=lambda ws: score(ws, qids))
    report["cv_ndcg"] = float(np.mean([f["test_ndcg"] for f in report["folds"]]))
    report["cv_ndcg_none"] = float(np.mean([f["test_ndcg_none"] for f in report["folds"]]))
    report["all_queries_best"] = {"weights": dict(zip(names, allbest)), "ndcg": score(allbest, qids)}
    print("tuning:", report["folds"], "cv", report["cv_ndcg"], "vs", report["cv_ndcg_none"], file=sys.stderr)
    return report


if __name__ == "__main__":
    raise SystemExit(main())
