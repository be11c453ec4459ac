"""The judge's principles 1-6 (judge.py) over every sentence of saved drafts, to see what a change
to the judge does before any question is asked again.

What the model wrote for each question of a saved answers run (`benchmarks.answers --out`: the
draft, or the answer shown when nothing was withheld) is cut into sentences, and each
sentence is judged against the evidence gathered again at this commit (`Answerer.gather`, as the
answer pass gathers it), with what the passages read write (`Library.read`), as the window reads a
model's sentence (`Answerer._verdict`: one whose cited sources do not support it is read again
without its markers). The local model's own check (principle 7) is not asked: it costs seconds a
sentence and is the same before and after a change to the principles. Beside each verdict: whether
the sentence holds a key fact of its question, and the class the run gave the answer.

    python -m benchmarks.rejudge judge --runs docs/results/answers-heldout30.json,... --out A.json
    python -m benchmarks.rejudge compare A.json B.json    # the verdicts that changed, and a count
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.answers import answerer_of, facts_found, load_set, open_library
from benchmarks.common import with_provenance

SETS = ["manuals", "filings", "markdown", "books", "papers", "abstracts", "licences"]
MODEL = "qwen2.5-coder-1.5b-instruct-int4"


def what_the_model_wrote(row: dict) -> str:
    """A run keeps the draft where it differs from what was shown; else the shown answer is the
    model's sentences, above the quotes under them."""
    if (row.get("draft") or "").strip():
        return row["draft"]
    from edgechat.core.answering.answer import YOUR_DOCUMENTS_SAY

    return "" if row["declined"] else row["shown"].split(YOUR_DOCUMENTS_SAY)[0].strip()


def judge_runs(runs: list[str], model: str = MODEL) -> list[dict]:
    from edgechat.core.answering.citations import sentence_spans
    from edgechat.core.answering.judge import Library
    from edgechat.core.records import RagRequest

    drafts: dict[str, dict] = {}
    splits: list[str] = []
    for path in runs:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
        splits.append(run["split"])
        for r in run["rows"]:
            if r["client"] == model and (written := what_the_model_wrote(r)):
                drafts[r["id"]] = {**r, "draft": written}
    rows: list[dict] = []
    for name in SETS:
        questions = []
        for split in splits:
            try:
                questions += [q for q in load_set(name, split) if q.id in drafts]
            except FileNotFoundError:
                continue
        if not questions:
            continue
        engine = open_library(name)
        try:
            extractive = engine.choose_client("extractive").client
            answerer = answerer_of(engine, extractive)
            # The window's reading of a model's sentence (a wrong marker read again without it);
            # the model itself is not asked.
            reader = answerer_of(engine, engine.choose_client(model).client)
            for q in questions:
                saved = drafts[q.id]
                g = answerer.gather(RagRequest(q.question))
                read = Library.read(g.passages, g.subject.words)
                for i, (start, end) in enumerate(sentence_spans(saved["draft"])):
                    sentence = saved["draft"][start:end]
                    j = reader._verdict(sentence, g.selection.quotes, q.question, g.subject.words, read)
                    rows.append({"id": q.id, "sentence": i, "text": sentence, "answerable": q.answerable,
                                 "class": saved["class"],
                                 "facts": len(facts_found(sentence, q.key_facts)) if q.answerable else 0,
                                 "verdict": str(j.support), "reason": j.reason})
                print(f"{q.id}: {sum(r['id'] == q.id for r in rows)} sentences", file=sys.stderr, flush=True)
        finally:
            engine.close()
    return rows


def changes(before: list[dict], after: list[dict]) -> dict:
    """The sentences whose verdict differs, and how many of them hold a key fact."""
    old = {(r["id"], r["sentence"]): r for r in before}
    changed = [{**r, "verdict_before": old[(r["id"], r["sentence"])]["verdict"],
                "reason_before": old[(r["id"], r["sentence"])]["reason"]}
               for r in after if (r["id"], r["sentence"]) in old and old[(r["id"], r["sentence"])]["verdict"] != r["verdict"]]
    now_supported = [c for c in changed if c["verdict"] == "supported"]
    now_withheld = [c for c in changed if c["verdict_before"] == "supported"]

    def tally(cs: list[dict]) -> dict:
        return {"with_a_key_fact": sum(bool(c["facts"]) for c in cs),
                "answerable_without_one": sum(c["answerable"] and not c["facts"] for c in cs),
                "unanswerable": sum(not c["answerable"] for c in cs)}

    return {"sentences": len(after), "changed": len(changed), "now_supported": tally(now_supported),
            "now_withheld": tally(now_withheld), "rows": changed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    j = sub.add_parser("judge", help="judge every sentence of the saved drafts")
    j.add_argument("--runs", required=True, help="saved answers runs, with commas")
    j.add_argument("--model", default=MODEL)
    j.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="the verdicts that differ between two judge outputs")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.command == "judge":
        runs = args.runs.split(",")
        rows = judge_runs(runs, args.model)
        out = with_provenance({"runs": runs, "model": args.model, "rows": rows})
        Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
        print(json.dumps({"sentences": len(rows), "supported": sum(r["verdict"] == "supported" for r in rows)}))
        return 0
    before, after = (json.loads(Path(p).read_text(encoding="utf-8"))["rows"] for p in (args.before, args.after))
    print(json.dumps(changes(before, after), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
