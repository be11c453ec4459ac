"""Questions nobody has read, asked as a user asks them; and the answers re-checked later.

    python -m benchmarks.spot_check ask --library DIR --round 16 --out OUT
        asks each question of the round (benchmarks/data/spot_rounds.json, or --questions FILE, one
        a line) with `edgechat ask --json`, one process each as a user would, and writes
        OUT/a<N>.json beside OUT/questions.txt. Reading the answers against the documents is by hand.
    python -m benchmarks.spot_check recheck OUT [--json]
        re-runs today's checks over the recorded answers (each answer, or the draft of a withheld
        one, against the sources it was given): which would be shown now, and which were then. What
        changed is what a new check did to answers already read.

Needs the default model installed (`edgechat models install`) for `ask`; `recheck` needs only the
embedder. Not part of the test command.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROUNDS = Path(__file__).parent / "data" / "spot_rounds.json"


def _questions(args: argparse.Namespace) -> list[str]:
    if args.questions:
        return [q for q in Path(args.questions).read_text(encoding="utf-8").splitlines() if q.strip()]
    rounds = json.loads(ROUNDS.read_text(encoding="utf-8"))["rounds"]
    if args.round not in rounds:
        raise SystemExit(f"no round {args.round!r} in {ROUNDS} (rounds: {', '.join(rounds)})")
    return list(rounds[args.round])


def ask(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    questions = _questions(args)
    (out / "questions.txt").write_text("\n".join(questions) + "\n", encoding="utf-8")
    for i, q in enumerate(questions, 1):
        cmd = [sys.executable, "-m", "edgechat", "--library", args.library, "ask", "--json", q]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{i}: failed ({done.returncode}): {done.stderr.strip()[-300:]}", file=sys.stderr)
            continue
        (out / f"a{i}.json").write_text(done.stdout, encoding="utf-8")
        answer = json.loads(done.stdout)
        print(f"{i} {'withheld' if answer['abstained'] else 'SHOWN   '} | {q}", flush=True)


def recheck(args: argparse.Namespace) -> list[dict[str, Any]]:
    from edgechat.core.answering.answer import gives_no_figure, misses_the_amount, should_withhold
    from edgechat.core.answering.verify import verify
    from edgechat.core.embedding import load_default_embedder
    from edgechat.core.records import Source, Support

    folder = Path(args.out)
    questions = (folder / "questions.txt").read_text(encoding="utf-8").splitlines()
    embedder = load_default_embedder()
    rows = []
    for i, q in enumerate(questions, 1):
        path = folder / f"a{i}.json"
        if not path.exists():
            continue
        r = json.loads(path.read_text(encoding="utf-8"))
        text = r["draft"] if r["abstained"] else r["answer"]
        if not text or not r["sources"]:
            continue  # no model call ("not in your documents"), or nothing written
        sources = [Source(s["ordinal"], s["content"], s["title"], s["path"], s["score"], s["page"], s["start"],
                          s["end"], table_header=s["table_header"], metadata=s.get("metadata") or {})
                   for s in r["sources"]]
        verdicts = verify(text, sources, embedder.embed, q)
        withheld = (should_withhold(verdicts) or gives_no_figure(q, text) or misses_the_amount(q, text, sources)
                    or all(v.support == Support.NO_CLAIM for v in verdicts))
        rows.append({"n": i, "question": q, "shown_then": not r["abstained"], "shown_now": not withheld,
                     "text": " ".join(text.split())[:200]})
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
    else:
        for row in rows:
            now, then = ("SHOWN" if row["shown_now"] else "withheld"), ("SHOWN" if row["shown_then"] else "withheld")
            mark = "  " if now == then else "* "
            print(f"{mark}{row['n']:>3} {now:<8} (was {then:<8}) | {row['text'][:120]}")
        changed = sum(r["shown_now"] != r["shown_then"] for r in rows)
        print(f"{len(rows)} answers re-checked: {sum(r['shown_now'] for r in rows)} shown now, "
              f"{sum(r['shown_then'] for r in rows)} then; {changed} changed (marked *)")
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.spot_check", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("ask", help="ask a round's questions, one `edgechat ask --json` each")
    a.add_argument("--library", required=True, help="the library folder (e.g. the sec10q-dev evaluation library)")
    a.add_argument("--round", default="16", help="a round of benchmarks/data/spot_rounds.json")
    a.add_argument("--questions", help="a file of questions, one a line, instead of a round")
    a.add_argument("--out", required=True)
    c = sub.add_parser("recheck", help="re-run the checks over the answers an `ask` recorded")
    c.add_argument("out")
    c.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    ask(args) if args.command == "ask" else recheck(args)


if __name__ == "__main__":
    main()
