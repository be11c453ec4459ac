"""Principle 7 (the 1.5B asked whether the evidence supports a sentence) over the sentences that an
ablated principle let through: would the model's own check have withheld them anyway?

    PYTHONPATH=. python docs/results/ablate-principles-self-check.py ABLATION.json OUT.json "judge.OFF={'cause'}" ...

ABLATION.json is a `benchmarks.rejudge judge` output with those settings; the evidence is gathered
again at this commit, as the answer pass gathers it, and the model asked as `SelfCheck` asks it.
"""
import json
import sys

from benchmarks.answers import answerer_of, load_set, open_library
from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.llm.support_check import SelfCheck
from edgechat.core.records import RagRequest

SETS = {"man": "manuals", "fil": "filings", "md": "markdown", "bk": "books", "abs": "abstracts", "lic": "licences"}
ablation, out_path, settings = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3:]
by_set: dict[str, list] = {}
for k in settings:
    for r in ablation["settings"][k]["rows"]:
        if r["verdict"] == "supported":
            by_set.setdefault(SETS[r["id"].split("-")[0]], []).append((k, r))
out = []
for name, rows in by_set.items():
    engine = open_library(name)
    client = engine.choose_client("qwen2.5-coder-1.5b-instruct-int4").client
    answerer = answerer_of(engine, client)
    for k, r in rows:
        q = next(q for q in load_set(name, "heldout" + r["id"].split("-")[1][1:]) if q.id == r["id"])
        g = answerer.gather(RagRequest(q.question))
        p = SelfCheck(client)("\n".join(x.reading for x in g.selection.quotes),
                              " ".join(MARKER_RE.sub(" ", r["text"]).split()))
        out.append({"setting": k, "id": r["id"], "answerable": r["answerable"], "facts": r["facts"], "p_yes": p,
                    "text": r["text"]})
    engine.close()
json.dump(out, open(out_path, "w"), indent=1)
