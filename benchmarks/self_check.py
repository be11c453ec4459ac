"""How well the local model checks its own sentences (judge.py, principle 7), over saved drafts.

For each draft a saved answers run holds (`benchmarks.answers --out`), its first sentence is put to
the same local model as the answer pass puts it (`support_check.SelfCheck`: "Document: <the
chosen quotes> / Claim: <sentence>", with an instruction to answer Yes or No), and P(Yes) is read
from the first token's logits (against P(No)). Beside it: the judge's verdict on the same sentence and quotes, and how many of
the question's key facts the sentence holds. The summary says whether P(Yes) tells sentences that
hold a key fact from those that hold none or answer an unanswerable question (AUC), what a veto on
the judge's passes would withhold, and what a check costs.

    python -m benchmarks.self_check --runs docs/results/answers-heldout38.json,... \
        [--model qwen2.5-coder-1.5b-instruct-int4] [--evidence chosen|supporting] --out FILE.json

`--evidence supporting` gives the model only the quotes the judge's verdict rests on (a shorter
prompt), and asks only about the sentences the judge lets through.

The evidence is gathered again at this commit (`Answerer.gather`), so it may differ from the run's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks.answers import answerer_of, facts_found, load_set, open_library
from benchmarks.common import with_provenance

SETS = ["manuals", "filings", "markdown", "books", "papers"]


def auc(pos: list[float], neg: list[float]) -> float | None:
    """The chance that a positive scores above a negative (ties count half)."""
    if not pos or not neg:
        return None
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="saved answers runs, with commas")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct-int4")
    ap.add_argument("--evidence", choices=("chosen", "supporting"), default="chosen")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    from edgechat.core.answering.citations import MARKER_RE, sentence_spans
    from edgechat.core.answering.judge import Library, judge
    from edgechat.core.llm import manager
    from edgechat.core.llm.genai_client import GenaiChatClient
    from edgechat.core.llm.support_check import SelfCheck
    from edgechat.core.records import RagRequest

    drafts: dict[str, dict] = {}
    splits: list[str] = []
    for path in args.runs.split(","):
        run = json.loads(Path(path).read_text(encoding="utf-8"))
        splits.append(run["split"])
        drafts.update({r["id"]: r for r in run["rows"] if r["client"] == args.model and (r.get("draft") or "").strip()})
    model = next(m for m in manager.list_models() if m.name == args.model)
    client = GenaiChatClient(model.path)
    rows: list[dict] = []
    for name in SETS:
        engine = open_library(name)
        try:
            extractive = engine.choose_client("extractive").client
            answerer = answerer_of(engine, extractive)
            for split in splits:
                for q in load_set(name, split):
                    saved = drafts.get(q.id)
                    spans = sentence_spans(saved["draft"]) if saved else []
                    if not spans:
                        continue
                    g = answerer.gather(RagRequest(q.question))
                    if not g.selection.quotes:
                        continue
                    claim = saved["draft"][spans[0][0]:spans[0][1]]
                    bare = " ".join(MARKER_RE.sub(" ", claim).split())
                    read = Library.read(g.passages, g.subject.words)
                    verdict = judge(claim, g.selection.quotes, q.question, engine.embedder.embed, g.subject.words,
                                    None, read)
                    evidence = g.selection.quotes if args.evidence == "chosen" else verdict.quotes
                    if not evidence:
                        continue
                    document = "\n".join(x.reading for x in evidence)
                    t = time.perf_counter()
                    p = SelfCheck(client)(document, bare)  # the question the answer pass asks
                    tokens = client.last_check_stats["prompt_tokens"]
                    seconds = time.perf_counter() - t
                    rows.append({"id": q.id, "answerable": q.answerable, "class": saved["class"], "claim": bare,
                                 "key_facts": len(q.key_facts) if q.answerable else 0,
                                 "facts_in_claim": len(facts_found(bare, q.key_facts)) if q.answerable else 0,
                                 "p_yes": round(p, 4), "judge": str(verdict.support), "seconds": round(seconds, 3),
                                 "prompt_tokens": tokens})
                    print(json.dumps({k: rows[-1][k] for k in ("id", "facts_in_claim", "p_yes", "judge")}),
                          file=sys.stderr, flush=True)
        finally:
            engine.close()
    client.close()

    holds = [r["p_yes"] for r in rows if r["facts_in_claim"]]
    holds_none = [r["p_yes"] for r in rows if not r["facts_in_claim"]]
    unanswerable = [r["p_yes"] for r in rows if not r["answerable"]]
    passed = [r for r in rows if r["judge"] == "supported"]
    veto = {str(t): {"withheld": sum(r["p_yes"] < t for r in passed),
                     "withheld_counted_correct": sum(r["p_yes"] < t and r["class"] == "correct" for r in passed)}
            for t in (0.5, 0.6, 0.7)}
    summary = {"sentences": len(rows), "auc_key_fact_vs_none": auc(holds, holds_none),
               "auc_key_fact_vs_unanswerable": auc(holds, unanswerable),
               "judge_passed": len(passed), "veto_below": veto,
               "median_seconds": statistics.median(r["seconds"] for r in rows) if rows else None,
               "median_prompt_tokens": statistics.median(r["prompt_tokens"] for r in rows) if rows else None}
    out = with_provenance({"runs": args.runs.split(","), "model": args.model, "evidence": args.evidence,
                           "summary": summary, "rows": rows})
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
