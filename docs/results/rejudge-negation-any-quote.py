"""Judge each saved 1.5B sentence twice, NEG_ALL off and on, from one gather
(with docs/results/rejudge-negation-any-quote-not-kept.patch applied)."""
import json
import sys
from pathlib import Path

from benchmarks.answers import answerer_of, facts_found, load_set, open_library
from benchmarks.rejudge import MODEL, SETS, what_the_model_wrote
from edgechat.core.answering import judge as J
from edgechat.core.answering.citations import sentence_spans
from edgechat.core.answering.judge import Library
from edgechat.core.records import RagRequest

runs = sys.argv[1].split(","); out = sys.argv[2]
drafts, splits = {}, []
for path in runs:
    run = json.loads(Path(path).read_text())
    splits.append(run["split"])
    for r in run["rows"]:
        if r["client"] == MODEL and (w := what_the_model_wrote(r)) :
            drafts[r["id"]] = {**r, "draft": w}
rows = []
for name in SETS:
    qs = []
    for sp in splits:
        try: qs += [q for q in load_set(name, sp) if q.id in drafts]
        except FileNotFoundError: pass
    if not qs: continue
    engine = open_library(name)
    try:
        answerer = answerer_of(engine, engine.choose_client("extractive").client)
        reader = answerer_of(engine, engine.choose_client(MODEL).client)
        for q in qs:
            saved = drafts[q.id]
            g = answerer.gather(RagRequest(q.question))
            read = Library.read(g.passages, g.subject.words)
            for i, (s, e) in enumerate(sentence_spans(saved["draft"])):
                sent = saved["draft"][s:e]
                
                v = []
                for flag in (False, True):
                    J.NEG_ALL = flag
                    j = reader._verdict(sent, g.selection.quotes, q.question, g.subject.words, read)
                    v.append((str(j.support), j.reason))
                rows.append({"id": q.id, "sentence": i, "text": sent, "answerable": q.answerable, "class": saved["class"],
                             "facts": len(facts_found(sent, q.key_facts)) if q.answerable else 0,
                             "before": v[0], "after": v[1]})
            print(q.id, file=sys.stderr, flush=True)
    finally:
        engine.close()
ch = [r for r in rows if r["before"][0] != r["after"][0]]
print(json.dumps({"sentences": len(rows), "changed": len(ch)}))
Path(out).write_text(json.dumps({"runs": runs, "rows": rows, "changed": ch}, indent=1))
