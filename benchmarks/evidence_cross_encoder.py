"""Would a cross-encoder trained on the tuning halves choose better evidence, on halves and kinds of
documents it was not trained on? Three steps:

    python -m benchmarks.evidence_cross_encoder dump --out CANDIDATES.jsonl [--sets ...]
    .venv-convert/bin/python -m benchmarks.evidence_cross_encoder train CANDIDATES.jsonl --out DIR
    .venv-convert/bin/python -m benchmarks.evidence_cross_encoder compare CANDIDATES.jsonl DIR [--out R.json]

`dump` (the app's environment) writes, per answerable question of every reported half, the
quotes the evidence selector ranks best (evidence.select's `ranked`, its score, the quote before it
in its passage) and how many of the question's key facts each holds. `train` (the conversion
environment: torch and transformers) fine-tunes all-MiniLM-L6-v2, the app's embedder, as a
cross-encoder (question, quote + the quote before it) -> score, listwise: per question the quote
that holds the most key facts against seven that hold fewer (five of the twelve best-ranked, two
from below), on halves up to `--upto` of every set but `--hold`'s. `compare` ranks the 24 best
quotes of every other reported half (up to `--through`) by the selector's score, by the
cross-encoder's alone and by the two added, and counts the questions whose key facts the first
1, 2, 3 and 5 quotes hold, per held-out set and for the later halves of the trained sets.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.common import with_provenance

EMBEDDER = Path.home() / ".local/share/EdgeChat/models/embedders/all-MiniLM-L6-v2"
KEPT = 48  # quotes dumped per question
COMPARED = 24  # of them ranked again
MAX_TOKENS = 96
GROUP = 8  # quotes per question in a training step: one that answers, seven that do not
QUESTIONS_PER_STEP = 4


def half(split: str) -> int:
    """A split's number (heldout17 -> 17; tune, heldout -> 0)."""
    return int("".join(c for c in split if c.isdigit()) or 0)


def dump(sets: list[str], out: Path, through: int) -> None:
    from benchmarks.answers import QUESTIONS, facts_found, gathered
    from edgechat.core.answering.evidence import _in_context

    with out.open("w", encoding="utf-8") as f:
        for name in sets:
            splits = sorted(p.stem for p in (QUESTIONS / name).glob("*.jsonl") if half(p.stem) <= through)
            for _, split, q, g in gathered([name], splits):
                if not q.answerable:
                    continue
                in_order = sorted(g.selection.ranked, key=lambda x: (x.rank, x.start))
                before = {id(x): c[: len(c) - len(x.reading)] for x, c in zip(in_order, _in_context(in_order))}
                quotes = [{"reading": x.reading, "before": before[id(x)].strip(), "score": round(x.score, 4),
                           "facts": len(facts_found(x.reading, q.key_facts))} for x in g.selection.ranked[:KEPT]]
                f.write(json.dumps({"set": name, "split": split, "id": q.id, "question": q.question,
                                    "key_facts": q.key_facts, "quotes": quotes}) + "\n")


def pair(row: dict, quote: dict) -> tuple[str, str]:
    return row["question"], f"{quote['reading']} [SEP] {quote['before']}"


def answering(row: dict) -> list[int]:
    """The quotes holding the most key facts (none when no quote holds one)."""
    facts = [q["facts"] for q in row["quotes"]]
    best = max(facts, default=0)
    return [i for i, n in enumerate(facts) if best and n == best]


def train(candidates: Path, out: Path, hold: set[str], upto: int) -> None:
    import torch
    from transformers import BertForSequenceClassification, BertTokenizerFast

    random.seed(0)
    torch.manual_seed(0)
    rows = [r for r in map(json.loads, candidates.open(encoding="utf-8"))
            if r["set"] not in hold and half(r["split"]) <= upto and answering(r)]
    print(f"{len(rows)} training questions", file=sys.stderr)
    tok = BertTokenizerFast.from_pretrained(EMBEDDER)
    model = BertForSequenceClassification.from_pretrained(EMBEDDER, num_labels=1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
    steps = math.ceil(len(rows) / QUESTIONS_PER_STEP)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / (0.1 * steps)) * (steps - s) / steps)
    random.shuffle(rows)
    model.train()
    for step, b in enumerate(range(0, len(rows), QUESTIONS_PER_STEP), 1):
        firsts, seconds, sizes = [], [], []
        for r in rows[b:b + QUESTIONS_PER_STEP]:
            good = set(answering(r))
            others = [i for i in range(len(r["quotes"])) if i not in good]
            near, far = others[:12], others[12:]
            random.shuffle(near)
            chosen = [random.choice(sorted(good))] + near[:GROUP - 3] + random.sample(far, min(2, len(far)))
            for i in chosen:
                a, b2 = pair(r, r["quotes"][i])
                firsts.append(a)
                seconds.append(b2)
            sizes.append(len(chosen))
        enc = tok(firsts, seconds, truncation="longest_first", max_length=MAX_TOKENS, padding=True,
                  return_tensors="pt")
        logits = model(**enc).logits.squeeze(-1)
        loss = sum(torch.nn.functional.cross_entropy(part.unsqueeze(0), torch.zeros(1, dtype=torch.long))
                   for part in torch.split(logits, sizes)) / len(sizes)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 50 == 0:
            print(f"step {step}/{steps} loss {loss.item():.3f}", file=sys.stderr)
    model.save_pretrained(out)
    tok.save_pretrained(out)


def compare(candidates: Path, model_dir: Path, hold: set[str], upto: int, through: int) -> dict:
    import torch
    from transformers import BertForSequenceClassification, BertTokenizerFast

    from benchmarks.answers import facts_found

    tok = BertTokenizerFast.from_pretrained(model_dir)
    model = BertForSequenceClassification.from_pretrained(model_dir).eval()
    table: dict[str, Counter] = defaultdict(Counter)
    for r in map(json.loads, candidates.open(encoding="utf-8")):
        if not (r["set"] in hold or upto < half(r["split"])) or half(r["split"]) > through or not r["quotes"]:
            continue
        quotes = r["quotes"][:COMPARED]
        firsts, seconds = zip(*(pair(r, q) for q in quotes))
        with torch.no_grad():
            enc = tok(list(firsts), list(seconds), truncation="longest_first", max_length=MAX_TOKENS,
                      padding=True, return_tensors="pt")
            ce = model(**enc).logits.squeeze(-1).tolist()
        old = [q["score"] for q in quotes]
        sig = [1 / (1 + math.exp(-c)) for c in ce]
        orders = {"selector": old, "cross-encoder": ce,
                  **{f"selector + {w} x cross-encoder": [o + w * s for o, s in zip(old, sig)] for w in (0.25, 0.5, 1.0)}}
        group = r["set"] if r["set"] in hold else f"later halves of the trained sets ({upto + 1}-{through})"
        table[group]["questions"] += 1
        for name, score in orders.items():
            order = sorted(range(len(quotes)), key=lambda i: -score[i])
            for k in (1, 2, 3, 5):
                text = "\n".join(quotes[i]["reading"] for i in order[:k])
                table[group][f"{name}: first {k}"] += len(facts_found(text, r["key_facts"])) == len(r["key_facts"])
    return {"held_out_sets": sorted(hold), "trained_on_halves_up_to": upto, "compared_through": through,
            "key facts held by the first k quotes": {g: dict(c) for g, c in table.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=("dump", "train", "compare"))
    ap.add_argument("candidates", nargs="?", type=Path)
    ap.add_argument("model", nargs="?", type=Path)
    ap.add_argument("--sets", default="manuals,filings,markdown,books,papers,abstracts,licences")
    ap.add_argument("--hold", default="abstracts,licences", help="sets left out of training")
    ap.add_argument("--upto", type=int, default=45, help="train on halves up to this one")
    ap.add_argument("--through", type=int, default=52, help="the last reported half")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    hold = set(filter(None, args.hold.split(",")))
    if args.step == "dump":
        dump(args.sets.split(","), args.out, args.through)
    elif args.step == "train":
        train(args.candidates, args.out, hold, args.upto)
    else:
        result = with_provenance(compare(args.candidates, args.model, hold, args.upto, args.through))
        text = json.dumps(result, indent=1)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
