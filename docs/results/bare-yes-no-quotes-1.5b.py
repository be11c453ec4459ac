"""The 1.5B's answers shown as quotes alone ("Your documents say:" and nothing of the model's: a
bare yes or no) over saved held-out runs, by class, with the best evidence score and the model's
sureness of its first sentence: does either tell the quotes that answer from the rest?

    python docs/results/bare-yes-no-quotes-1.5b.py 56 98
"""
import json
import statistics
import sys
from pathlib import Path

MODEL = "qwen2.5-coder-1.5b-instruct-int4"
first, last = int(sys.argv[1]), int(sys.argv[2])
by_class: dict[str, list[dict]] = {}
for n in range(first, last + 1):
    path = Path(__file__).parent / f"answers-heldout{n}.json"
    if not path.is_file():
        continue
    for row in json.loads(path.read_text())["rows"]:
        if row["client"] == MODEL and not row["declined"] and row["shown"].startswith("Your documents say:"):
            kind = row["class"] if row["answerable"] else "unanswerable"
            by_class.setdefault(kind, []).append(row)


def spread(values: list[float]) -> dict:
    values = sorted(values)
    return {"median": round(statistics.median(values), 3), "quartiles": [round(values[len(values) // 4], 3),
                                                                         round(values[3 * len(values) // 4], 3)]}


out = {kind: {"answers": len(rows),
              "evidence_best": spread([r["evidence_best"] for r in rows]),
              "sure": spread([r["sure"] for r in rows if r["sure"] is not None]),
              "under_0.52": sum(r["evidence_best"] < 0.52 for r in rows)}
       for kind, rows in sorted(by_class.items())}
print(json.dumps({"halves": [first, last], "classes": out}, indent=1))
