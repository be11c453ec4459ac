"""Which documents the subject step names, per question, over saved question sets (no model).

    PYTHONPATH=. .venv/bin/python docs/results/subject-file-names.py SETS SPLITS OUT.json

SETS and SPLITS are comma-separated (a split a set lacks is skipped). Each question is gathered
as `benchmarks.answers --selection` gathers it; a row says which files the subject holds and
whether the question's own file is among them."""

import json
import sys
import time
from pathlib import Path

from benchmarks.answers import QUESTIONS, _same_file, gathered

sets, splits, out = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3]
rows = []
t = time.time()
for name in sets:
    for _, _, q, g in gathered([name], [s for s in splits if (QUESTIONS / name / f"{s}.jsonl").exists()]):
        ids = set(g.subject.file_ids)
        rows.append({"id": q.id, "answerable": q.answerable, "file": q.file, "n": len(ids),
                     "subject": sorted({Path(p.path).name for p in g.passages if p.file_id in ids}),
                     "right": any(_same_file(p.path, q.file) for p in g.passages if p.file_id in ids)})
json.dump({"rows": rows, "s": time.time() - t}, open(out, "w"), indent=0)
ans = [r for r in rows if r["answerable"]]
print(len(ans), "named", sum(r["n"] > 0 for r in ans), "right", sum(r["right"] for r in ans),
      "wrong", sum(r["n"] > 0 and not r["right"] for r in ans))
