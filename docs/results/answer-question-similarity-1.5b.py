"""How close in meaning the 1.5B's shown answers (docs/results/answers-heldout41..59.json) are to
their questions: the cosine of the question and the answer's first sentence, and that less the
cosine of the question and the closest of the first three quotes shown under it, for the counted
correct against the rest (AUC). Run from the checkout:
PYTHONPATH=. .venv/bin/python docs/results/answer-question-similarity-1.5b.py"""
import json
import re
import statistics

from benchmarks.answers import open_library
from edgechat.core.answering.answer import YOUR_DOCUMENTS_SAY
from edgechat.core.answering.citations import sentence_spans

MODEL = "qwen2.5-coder-1.5b-instruct-int4"


def unmarked(text: str) -> str:
    return re.sub(r"\s*\[\d+\]", "", text).strip()


def auc(pos: list[float], neg: list[float]) -> float:
    return sum((p > q) + (p == q) / 2 for p in pos for q in neg) / len(pos) / len(neg)


engine = open_library("markdown")  # only its embedder is used
rows = []
for half in range(41, 60):
    for r in json.load(open(f"docs/results/answers-heldout{half}.json"))["rows"]:
        if r["client"] != MODEL or r["declined"]:
            continue
        answer, _, quoted = r["shown"].partition(YOUR_DOCUMENTS_SAY)
        answer = answer.strip()
        first = unmarked(next((answer[s:e] for s, e in sentence_spans(answer)), answer))
        quotes = [unmarked(line) for line in quoted.split("\n") if line.strip()][:3]
        v = engine.embedder.embed([r["question"], first, *quotes])
        to_answer = float(v[0] @ v[1])
        to_quote = max((float(v[0] @ x) for x in v[2:]), default=0.0)
        rows.append({"id": r["id"], "class": r["class"], "to_answer": to_answer, "less_quote": to_answer - to_quote})
engine.close()
for c in ("correct", "shown_without_facts", "shown"):
    xs = [x for x in rows if x["class"] == c]
    print(c, len(xs), "median cosine", round(statistics.median(x["to_answer"] for x in xs), 3),
          "median less the quote's", round(statistics.median(x["less_quote"] for x in xs), 3))
for key in ("to_answer", "less_quote"):
    print(key, "AUC", round(auc([x[key] for x in rows if x["class"] == "correct"],
                                [x[key] for x in rows if x["class"] != "correct"]), 3))
