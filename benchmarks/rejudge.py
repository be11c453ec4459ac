"""The judge's principles 1-6 (judge.py) over every sentence of saved drafts, to see what a change
to the judge does before any question is asked again.

What the model wrote for each question of a saved answers run (`benchmarks.answers --out`: the
draft, or the answer shown when nothing was withheld) is cut into sentences, and each
sentence is judged against the evidence gathered again at this commit (`Answerer.gather`, as the
answer pass gathers it), with what the library writes of the question (`Answerer.library_read`),
as the window reads a model's sentence (`Answerer._verdict`). The local model's own check
(principle 7) is not asked: it costs seconds a sentence and is the same before and after a change
to the principles. Beside each verdict: whether
the sentence holds a key fact of its question, and the class the run gave the answer.

    python -m benchmarks.rejudge judge --runs docs/results/answers-heldout30.json,... --out A.json
    python -m benchmarks.rejudge compare A.json B.json    # the verdicts that changed, and a count

A change to the judge made behind a module-level setting is measured from one gather: each
`--set judge.NAME=VALUE` (a Python literal; the module is one of edgechat.core.answering) judges
every sentence again with that setting, and the output counts, per setting, the verdicts it
changes (`compare` on each). The evidence is gathered once, before any setting, so a setting of
the evidence selector changes nothing here (`benchmarks.answers --selection` measures those).
docs/results/*.patch hold the settings of the changes measured so.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from benchmarks.answers import answerer_of, facts_found, load_set, open_library
from benchmarks.common import with_provenance

SETS = ["manuals", "filings", "markdown", "books", "papers", "abstracts", "licences", "releases"]
MODEL = "qwen2.5-coder-1.5b-instruct-int4"


def what_the_model_wrote(row: dict) -> str:
    """A run keeps the draft where it differs from what was shown; else the shown answer is the
    model's sentences, above the quotes under them."""
    if (row.get("draft") or "").strip():
        return row["draft"]
    from edgechat.core.answering.answer import YOUR_DOCUMENTS_SAY

    return "" if row["declined"] else row["shown"].split(YOUR_DOCUMENTS_SAY)[0].strip()


def setting(text: str) -> tuple[str, str, object]:
    """"judge.OFF={'kind'}" -> ("judge", "OFF", {"kind"})."""
    target, _, value = text.partition("=")
    module, _, name = target.strip().partition(".")
    if not (module and name and value):
        raise argparse.ArgumentTypeError(f"expected MODULE.NAME=VALUE, got {text!r}")
    return module, name, ast.literal_eval(value.strip())


@contextmanager
def applied(change: tuple[str, str, object]) -> Iterator[None]:
    """The answering module's setting changed for the duration."""
    module = importlib.import_module(f"edgechat.core.answering.{change[0]}")
    before = getattr(module, change[1])  # a setting the module does not have is an error
    setattr(module, change[1], change[2])
    try:
        yield
    finally:
        setattr(module, change[1], before)


def judge_runs(runs: list[str], model: str = MODEL,
               settings: dict[str, tuple[str, str, object]] | None = None) -> dict[str, list[dict]]:
    """Every sentence of the saved drafts judged as the judge is ("base"), and again under each of
    `settings` (name -> change), from one gather per question."""
    from edgechat.core.answering.citations import sentence_spans
    from edgechat.core.records import RagRequest

    drafts: dict[str, dict] = {}
    splits: list[str] = []
    for path in runs:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
        splits.append(run["split"])
        for r in run["rows"]:
            if r["client"] == model and (written := what_the_model_wrote(r)):
                drafts[r["id"]] = {**r, "draft": written}
    variants = {"base": None, **(settings or {})}
    out: dict[str, list[dict]] = {v: [] for v in variants}
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
            # The window's reading of a model's sentence; the model itself is not asked.
            reader = answerer_of(engine, engine.choose_client(model).client)
            for q in questions:
                saved = drafts[q.id]
                g = answerer.gather(RagRequest(q.question))
                spans = sentence_spans(saved["draft"])
                for variant, change in variants.items():
                    with applied(change) if change else nullcontext():
                        read = reader.library_read(q.question, g.passages, g.subject)
                        for i, (start, end) in enumerate(spans):
                            sentence = saved["draft"][start:end]
                            j = reader._verdict(sentence, g.selection.quotes, q.question, g.subject.words, read)
                            out[variant].append({
                                "id": q.id, "sentence": i, "text": sentence, "answerable": q.answerable,
                                "class": saved["class"],
                                "facts": len(facts_found(sentence, q.key_facts)) if q.answerable else 0,
                                "verdict": str(j.support), "reason": j.reason})
                print(f"{q.id}: {len(spans)} sentences", file=sys.stderr, flush=True)
        finally:
            engine.close()
    return out


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
    j.add_argument("--set", action="append", default=[], type=setting, metavar="MODULE.NAME=VALUE",
                   help="also judge with this answering module setting (repeatable; one gather)")
    c = sub.add_parser("compare", help="the verdicts that differ between two judge outputs")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.command == "judge":
        runs = args.runs.split(",")
        settings = {f"{m}.{n}={v!r}": (m, n, v) for m, n, v in args.set}
        judged = judge_runs(runs, args.model, settings)
        rows = judged.pop("base")
        changed = {name: changes(rows, after) for name, after in judged.items()}
        out = with_provenance({"runs": runs, "model": args.model, "rows": rows, "settings": changed})
        Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
        print(json.dumps({"sentences": len(rows), "supported": sum(r["verdict"] == "supported" for r in rows),
                          "changed": {name: c["changed"] for name, c in changed.items()}}))
        return 0
    before, after = (json.loads(Path(p).read_text(encoding="utf-8"))["rows"] for p in (args.before, args.after))
    print(json.dumps(changes(before, after), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
