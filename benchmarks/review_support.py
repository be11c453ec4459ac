"""A sheet for checking by hand that "supported" means supported.

    python -m benchmarks.review_support PROGRESS.jsonl [--client NAME[,NAME]] [--n 40] [--seed 1] [--drafts] [--out FILE.md]

Reads the answers a `benchmarks.answers` run recorded (its progress file: each answer with the
full text of its sources), draws `n` answers shown as answers (not withheld) that hold at least one sentence marked supported,
(--drafts: when fewer than `n` are shown, the rest are drawn from withheld drafts, whose
verdicts `ask --json` and the CLI show beside the quotes; each is headed "withheld draft"),
checks them again with the same code the app uses (edgechat.core.answering.verify, with the
embedder and the question), and writes for every supported sentence the sentence, the source number(s) it is
credited to, and the source sentence(s) given as its evidence, side by side. A person then reads
each pair and marks it: does the evidence say what the sentence says? The sheet has a box per
pair; the tally goes in the README.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("progress", type=Path)
    ap.add_argument("--client", default="", help="only these clients' answers (labels in the file, comma-separated)")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--drafts", action="store_true", help="fill up to N with withheld drafts")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    from benchmarks.answers import load_debian, load_sec10q
    from edgechat.core.answering.verify import verify
    from edgechat.core.embedding.loader import load_default_embedder
    from edgechat.core.records import Source, Support

    questions = {q.id: q.question for q in load_debian() + load_sec10q()}
    embedder = load_default_embedder()

    def sources_of(r: dict) -> list[Source]:
        # the document's title as the app had it (the checks read names in it); older records: the file name
        return [Source(ordinal=s["number"], content=s["content"], title=s.get("title") or s["file"], path=s["file"],
                       score=0.0, page=s["page"] or 0, start=0, end=len(s["content"]))
                for s in r["sources"]]

    shown, drafts = [], []
    for line in args.progress.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        r = d["record"]
        if "error" in r or (args.client and d["client"] not in args.client.split(",")):
            continue
        if not r.get("abstained"):
            if any(v["support"] == "supported" for v in r.get("verdicts") or []):
                shown.append((d, r["text"]))
        elif args.drafts and r.get("draft"):  # the record keeps no draft verdicts: checked below
            drafts.append((d, r["draft"]))
    rng = random.Random(args.seed)
    rng.shuffle(shown)
    rng.shuffle(drafts)
    def check(d: dict, text: str) -> list:
        return verify(text, sources_of(d["record"]), embedder.embed, questions.get(d["id"], ""))

    picked = [(d, text, check(d, text)) for d, text in shown[: args.n]]
    for d, text in drafts:
        if len(picked) >= args.n:
            break
        verdicts = check(d, text)
        if any(v.support == Support.SUPPORTED for v in verdicts):
            picked.append((d, text, verdicts))
    out = [f"# Supported sentences, checked by hand ({len(picked)} answers from {args.progress.name})", ""]
    pairs = 0
    for d, text, verdicts in picked:
        r = d["record"]
        by_number = {s.ordinal: s for s in sources_of(r)}
        out += [f"## {d['client']} {d['id']}" + (" (withheld draft)" if r.get("abstained") else ""), ""]
        out += [f"Question: {questions.get(d['id'], '?')}", ""]
        for v in verdicts:
            if v.support != Support.SUPPORTED:
                continue
            pairs += 1
            out.append(f"- [ ] **{text[v.start:v.end].strip()}**")
            for e in v.evidence:
                src = by_number.get(e.number)
                quote = " ".join(src.content[e.start:e.end].split()) if src else "?"
                out.append(f"  - [{e.number}] {src.path if src else '?'} p.{src.page if src else '?'}: {quote}")
        out.append("")
    out.insert(1, f"{pairs} supported sentences. Mark each [x] when its evidence says what it says.")
    text = "\n".join(out) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(json.dumps({"answers": len(picked), "withheld_drafts": sum(bool(d["record"].get("abstained")) for d, _, _ in picked),
                          "supported_sentences": pairs, "sheet": str(args.out)}))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
