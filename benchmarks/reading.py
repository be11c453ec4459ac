"""How well a local model tells evidence that answers from evidence that does not.

    python -m benchmarks.reading --splits heldout16,heldout17 [--sets ...] [--model NAME]
                                 [--ways first3,given,choose] [--out FILE.json]

For each question of the splits, the retrieval and evidence steps run as the answer runs them
(`benchmarks.answers.gathered`); a question whose best evidence is under the evidence threshold is
declined before any model reads, and is left out. Then the reading model is asked, each way:

- `first3`: "Does the text state the answer to the question?" about the first three quotes the
  writer is given (their words alone);
- `given`: the same question about every quote the writer is given, table rows with their
  headings (what `reader.py` reads);
- `choose`: the eight best candidates (each quote with the one after it in its passage, best
  first), numbered, and "Which passage states the answer? Reply with its number, or 0 if none
  does.", its choice read from the probabilities of the first token.

A question is labelled as answered when it is answerable and the quotes the writer is given hold
every key fact. Reported per way: the AUC of the probability for that label, how many questions
pass each threshold with and without the answer (and how many of them are unanswerable), the
median seconds per question; for `choose`, how often its first choice holds the key facts against
the scorer's first. Prints JSON.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from benchmarks.answers import SETS, gathered, holds
from benchmarks.common import emit

WAYS = ("first3", "given", "choose")
THRESHOLDS = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
CANDIDATES = 8
CHOOSE = "Which passage states the answer to the question? Reply with its number, or 0 if none does."


def auc(labels: list[int], scores: list[float]) -> float | None:
    """The probability that a labelled question scores above an unlabelled one (ties count half)."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def candidates(ranked: list) -> list[str]:
    """The best quotes, each with the one after it in its passage, best first, without repeats."""
    order: dict[int, list[int]] = {}
    for i, q in enumerate(ranked):
        order.setdefault(id(q.source), []).append(i)
    after: dict[int, int] = {}
    for ids in order.values():
        ids.sort(key=lambda i: ranked[i].start)
        after.update(zip(ids, ids[1:]))
    out: list[str] = []
    for i, q in enumerate(ranked):
        text = " ".join((q.reading + (" " + ranked[after[i]].reading if i in after else "")).split())
        if text not in out:
            out.append(text)
        if len(out) == CANDIDATES:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    from edgechat.core import paths
    from edgechat.core.answering.answer import MIN_EVIDENCE, PROMPT_WORDS, _within
    from edgechat.core.answering.reader import SYSTEM, EvidenceReader, Thresholds
    from edgechat.core.llm.genai_client import GenaiChatClient
    from edgechat.core.records import ChatMessage, Role

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join((*SETS, "papers")))
    ap.add_argument("--splits", required=True)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct-int4")
    ap.add_argument("--ways", default=",".join(WAYS))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    ways = args.ways.split(",")
    model = GenaiChatClient(paths.llm_dir() / args.model)
    reader = EvidenceReader(model, Thresholds(0.0, 0.0))
    rows: list[dict] = []
    for name, split, q, g in gathered(args.sets.split(","), args.splits.split(",")):
        quotes = g.selection.quotes
        if not quotes or g.selection.best < MIN_EVIDENCE:
            continue
        given = _within(quotes, PROMPT_WORDS)
        row: dict = {"set": name, "id": q.id, "answerable": q.answerable,
                     "answered": q.answerable and holds("\n".join(x.reading for x in given), q.key_facts)}
        for way in ways:
            t = time.perf_counter()
            if way == "first3":
                row[way] = reader.answers(q.question, [x.text for x in given[:3]])
            elif way == "given":
                row[way] = reader.answers(q.question, [x.reading for x in given])
            else:
                cands = candidates(g.selection.ranked)
                listing = "\n".join(f"[{i}] {c}" for i, c in enumerate(cands, 1))
                messages = [ChatMessage(Role.SYSTEM, SYSTEM),
                            ChatMessage(Role.USER, f"Passages:\n{listing}\n\nQuestion: {q.question}\n\n{CHOOSE}")]
                probs = model.choose(messages, [str(i) for i in range(len(cands) + 1)])
                first = int(np.argmax(probs[1:])) if len(probs) > 1 else 0
                row[way] = 1.0 - probs[0]
                row["choose_first_holds"] = q.answerable and holds(cands[first], q.key_facts) if cands else False
                row["scorer_first_holds"] = q.answerable and holds(cands[0], q.key_facts) if cands else False
            row[f"{way}_s"] = time.perf_counter() - t
        rows.append(row)
    labels = [int(r["answered"]) for r in rows]
    report: dict = {"model": args.model, "splits": args.splits, "sets": args.sets, "questions": len(rows),
                    "answerable": sum(r["answerable"] for r in rows), "answered": sum(labels), "ways": {}}
    for way in ways:
        scores = [r[way] for r in rows]
        report["ways"][way] = {
            "auc": auc(labels, scores),
            "median_s": round(statistics.median(r[f"{way}_s"] for r in rows), 2) if rows else None,
            "thresholds": {str(t): {"passed": sum(s >= t for s in scores),
                                    "with_answer": sum(s >= t and y for s, y in zip(scores, labels)),
                                    "unanswerable": sum(s >= t and not r["answerable"] for s, r in zip(scores, rows))}
                           for t in THRESHOLDS},
        }
        if way == "choose":
            report["ways"][way]["first_choice_holds"] = sum(r["choose_first_holds"] for r in rows)
            report["ways"][way]["scorer_first_holds"] = sum(r["scorer_first_holds"] for r in rows)
    report["rows"] = rows
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
