"""Would withholding an answer that writes no figure, where the question asks how many, how much,
how long, what percentage, year, date, number or amount, withhold more wrong answers than right?
Counts the 1.5B's shown answers of the saved held-out runs by class, and by whether the answer
(the text above "Your documents say:") writes a figure in digits.

    .venv/bin/python docs/results/answer-asks-figure-1.5b.py 56 96 > docs/results/answer-asks-figure-1.5b-heldout56-96.json
"""

import collections
import json
import re
import sys
from pathlib import Path

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.answering.words import figures

ASKS_FIGURE = re.compile(r"\bhow (?:many|much|long|large|big|deep|often|old|far|high|wide|tall|fast|soon)\b"
                         r"|\bwhat (?:percentage|year|date|number|amount)\b", re.IGNORECASE)
first, last = map(int, sys.argv[1:3])
counts: collections.Counter[str] = collections.Counter()
without: list[dict[str, str]] = []
for n in range(first, last + 1):
    for row in json.loads(Path(f"docs/results/answers-heldout{n}.json").read_text())["rows"]:
        if row["client"] != "qwen2.5-coder-1.5b-instruct-int4" or row["declined"] or not ASKS_FIGURE.search(row["question"]):
            continue
        answer = MARKER_RE.sub(" ", row["shown"].split("Your documents say:")[0])
        has = bool(figures(answer))
        counts[f"{row['class']}, {'a figure' if has else 'no figure'}"] += 1
        if not has:
            without.append({"id": row["id"], "class": row["class"], "answer": answer.strip()[:200]})
print(json.dumps({"halves": f"{first}-{last}", "counts": dict(sorted(counts.items())), "without_a_figure": without},
                 indent=1, ensure_ascii=False))
