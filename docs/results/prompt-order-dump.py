"""Dump, per answerable question, the selector's ranked quotes (first 80) and its chosen ones."""
import json
import sys

from benchmarks.answers import gathered
from edgechat.core.answering.evidence import question_parts

sets = sys.argv[1].split(","); splits = sys.argv[2].split(","); out = sys.argv[3]
rows = []
for name, split, q, g in gathered(sets, splits):
    sel = g.selection
    key = lambda x: (x.source.chunk_id, x.start)
    chosen = [key(x) for x in sel.quotes]
    ranked = sel.ranked[:80]
    keys = {key(x) for x in ranked}
    extra = [x for x in sel.quotes if key(x) not in keys]
    rows.append({"set": name, "split": split, "id": q.id, "answerable": q.answerable, "question": q.question,
                 "key_facts": q.key_facts, "parts": len(question_parts(q.question)), "best": sel.best,
                 "quotes": [{"k": list(key(x)), "text": x.text, "reading": x.reading, "score": x.score,
                             "rank": x.rank, "chosen": chosen.index(key(x)) if key(x) in chosen else None}
                            for x in ranked + extra]})
    print(q.id, file=sys.stderr, flush=True)
json.dump(rows, open(out, "w"))
