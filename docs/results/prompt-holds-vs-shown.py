"""What the 1.5B showed on halves 96-101, by where the answer's key facts were: in its prompt, only in
the quotes chosen, only in the passages read, or not read (selection from `benchmarks.answers
--selection` at 51837c8: sel-base.json for six sets, sel-base-rel.json for the release notes)."""
import collections
import json
import sys

from edgechat.core.answering import answer as A

sel = {r["id"]: r for f in sys.argv[1:] for r in json.load(open(f))["rows"]}
said = {A.MODEL_FOUND_NONE: "found none", A.MODEL_NOT_CHECKED: "not checked", A.MODEL_UNSURE: "unsure",
        A.MODEL_RESTATED: "restated", A.NOT_IN_DOCUMENTS: "not in documents", A.NOTHING_FOUND: "nothing"}
counts = collections.Counter()
for half in range(96, 102):
    for r in json.load(open(f"docs/results/answers-heldout{half}.json"))["rows"]:
        s = sel.get(r["id"])
        if r["client"] != "qwen2.5-coder-1.5b-instruct-int4" or not r["answerable"] or not s:
            continue
        where = "prompt" if s["prompted"] else "chosen" if s["chosen"] else "read" if s["read"] else "unread"
        counts[where, said.get(r["shown"].strip(), "?") if r["declined"] else r["class"]] += 1
for key in sorted(counts):
    print(*key, counts[key], sep="\t")
