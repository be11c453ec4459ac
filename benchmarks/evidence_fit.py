"""Fit the evidence scorer's weights on the tuning halves, and check that they carry to a set
they were not fitted on.

    python -m benchmarks.evidence_fit [--sets manuals,filings,markdown,books] [--splits tune,heldout,...]
                                      [--out FILE.json]

Every quote the evidence selector reads (answering/evidence.py) is described by signals that hold
for any document: its meaning (cosine with the question), the share of the question's terms it
holds, its passage's rank, the best meaning and term share of its neighbours in the passage, a
figure when the question asks for an amount, whether it is a table row, its length. A quote is
right when it, with the quote after it (what `select` gives the writer), holds every key fact of
the question. The weights are fitted listwise (a softmax over each question's quotes, the right
ones the target) with plain gradient descent.

The report is leave-one-set-out: for each set, weights fitted on the others choose its evidence the
way `select` does (the best quotes, each with the one after it), against the weights in
evidence.py today on the same quotes. A weighting that only helps the sets it was fitted on shows
here. Prints JSON.
"""

from __future__ import annotations

import argparse
import math
import pickle
from pathlib import Path

import numpy as np

from benchmarks.answers import QUESTIONS, SETS, gathered, holds
from benchmarks.common import emit

FEATURES = ("meaning", "terms", "position", "neighbour_meaning", "neighbour_terms", "figure", "row", "length")


def describe(question: str, ranked: list, n_sources: int) -> tuple[np.ndarray, list[list[int]], list]:
    """Per quote: its features (FEATURES), and per passage the quotes' indices in reading order."""
    from edgechat.core.answering import evidence
    from edgechat.core.answering.words import figures

    asks_figure = bool(evidence._ASKS_FIGURE_RE.search(question))
    passages: dict[int, list[int]] = {}
    for i, q in enumerate(ranked):
        passages.setdefault(id(q.source), []).append(i)
    order = [sorted(ids, key=lambda i: ranked[i].start) for ids in passages.values()]
    x = np.zeros((len(ranked), len(FEATURES)), dtype=np.float64)
    for ids in order:
        for j, i in enumerate(ids):
            q = ranked[i]
            near = ids[max(0, j - evidence.NEIGHBOURS): j] + ids[j + 1: j + 1 + evidence.NEIGHBOURS]
            x[i] = (max(0.0, q.meaning), q.term_share, 1 - q.rank / max(1, n_sources),
                    max((max(0.0, ranked[k].meaning) for k in near), default=0.0),
                    max((ranked[k].term_share for k in near), default=0.0),
                    float(asks_figure and bool(figures(q.text))), float(q.row),
                    math.log1p(len(q.text.split())) / 5)
    return x, order, ranked


def today(x: np.ndarray) -> np.ndarray:
    """The score evidence.py gives (its weights), from the same features."""
    from edgechat.core.answering import evidence as ev

    own = ev.W_MEANING * x[:, 0] + ev.W_TERMS * x[:, 1] + ev.W_POSITION * x[:, 2]
    neighbour = ev.W_MEANING * x[:, 3] + ev.W_TERMS * x[:, 4]  # about the neighbour's own score
    return own + ev.W_NEIGHBOUR * neighbour + ev.W_FIGURE * x[:, 5]


def chosen(scores: np.ndarray, after: dict[int, int], readings: list[str], facts: list[str], anchors: int = 3) -> bool:
    """Do the best `anchors` quotes, each with the one after it, hold every key fact?"""
    picked: list[int] = []
    for i in np.argsort(-scores)[:anchors]:
        picked.append(int(i))
        if int(i) in after:
            picked.append(after[int(i)])
    return holds("\n".join(readings[i] for i in picked), facts)


def fit(data: list[tuple[np.ndarray, np.ndarray]], l2: float = 1e-3, steps: int = 2000, lr: float = 0.5) -> np.ndarray:
    """Weights maximising the softmax probability of each question's right quotes (all of a
    question's quotes in one softmax; the right ones share the target)."""
    x = np.concatenate([d[0] for d in data])
    target = np.concatenate([d[1] / d[1].sum() for d in data])
    seg = np.concatenate([np.full(len(d[0]), k) for k, d in enumerate(data)])
    n = len(data)
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        s = x @ w
        top = np.full(n, -np.inf)
        np.maximum.at(top, seg, s)
        e = np.exp(s - top[seg])
        z = np.zeros(n)
        np.add.at(z, seg, e)
        w -= lr * (x.T @ (e / z[seg] - target) / n + l2 * w)
    return w


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join((*SETS, "papers")))
    ap.add_argument("--splits", default="tune,heldout,heldout2,heldout3,heldout4,heldout5,heldout6,heldout7")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cache", type=Path, help="keep the quotes' features here, and read them from here next time")
    args = ap.parse_args(argv)
    sets, splits = args.sets.split(","), args.splits.split(",")
    items: list[dict] = []
    if args.cache and args.cache.exists():
        items = pickle.loads(args.cache.read_bytes())
    per_set = [(name, [sp for sp in splits if (QUESTIONS / name / f"{sp}.jsonl").exists()]) for name in sets]
    fresh = not items
    for name, split, q, g in (row for name, have in per_set for row in gathered([name], have) if fresh):
        if not q.answerable or not g.selection.ranked:
            continue
        x, order, ranked = describe(q.question, g.selection.ranked, g.selection.passages)
        after = {ids[j]: ids[j + 1] for ids in order for j in range(len(ids) - 1)}
        y = np.array([float(holds("\n".join(ranked[k].reading for k in (i, after.get(i, i))), q.key_facts))
                      for i in range(len(ranked))])
        items.append({"set": name, "question": q.question, "x": x, "y": y, "after": after,
                      "readings": [r.reading for r in ranked], "facts": q.key_facts})
    if args.cache and not args.cache.exists():
        args.cache.write_bytes(pickle.dumps(items))
    report: dict = {"sets": sets, "splits": splits, "questions": len(items), "features": FEATURES, "folds": {}}
    for held in sets:
        train = [(it["x"], it["y"]) for it in items if it["set"] != held and it["y"].any()]
        w = fit(train)
        test = [it for it in items if it["set"] == held]
        new = sum(chosen(it["x"] @ w, it["after"], it["readings"], it["facts"]) for it in test)
        old = sum(chosen(today(it["x"]), it["after"], it["readings"], it["facts"]) for it in test)
        report["folds"][held] = {"questions": len(test), "chosen_today": old, "chosen_fitted": new,
                                 "weights": dict(zip(FEATURES, np.round(w, 3).tolist()))}
    w = fit([(it["x"], it["y"]) for it in items if it["y"].any()])
    report["weights_all_sets"] = dict(zip(FEATURES, np.round(w, 3).tolist()))
    report["chosen_fitted_in_sample"] = sum(chosen(it["x"] @ w, it["after"], it["readings"], it["facts"])
                                            for it in items)
    report["chosen_today"] = sum(f["chosen_today"] for f in report["folds"].values())
    report["chosen_fitted_leave_one_set_out"] = sum(f["chosen_fitted"] for f in report["folds"].values())
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
