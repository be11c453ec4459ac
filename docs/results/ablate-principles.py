"""Judge each saved 1.5B sentence with every principle on, then with each one off, from one gather."""
import json
import sys
from pathlib import Path

from benchmarks.answers import answerer_of, facts_found, load_set, open_library
from benchmarks.rejudge import MODEL, SETS, what_the_model_wrote
from edgechat.core.answering import judge as J
from edgechat.core.answering.citations import sentence_spans
from edgechat.core.answering.judge import Library
from edgechat.core.records import RagRequest

FLAGS = ["attrib", "reply", "code_line", "code_said", "kind", "scale", "date", "cell", "said_of", "says_more",
         "quotations", "names", "added", "negation", "opposed", "cause", "anywhere"]
runs = sys.argv[1].split(","); out = sys.argv[2]
drafts, splits = {}, []
for path in runs:
    run = json.loads(Path(path).read_text())
    splits.append(run["split"])
    for r in run["rows"]:
        if r["client"] == MODEL and (w := what_the_model_wrote(r)):
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
        raw, cache = reader.embed, {}
        def embed(texts, raw=raw, cache=cache):
            k = tuple(texts)
            if k not in cache:
                cache[k] = raw(list(texts))
            return cache[k]
        reader.embed = embed
        for q in qs:
            saved = drafts[q.id]
            g = answerer.gather(RagRequest(q.question))
            read = Library.read(g.passages, g.subject.words)
            cache.clear()
            for i, (s, e) in enumerate(sentence_spans(saved["draft"])):
                sent = saved["draft"][s:e]
                v = {}
                for flag in ["", *FLAGS]:
                    J.OFF = {flag} if flag else set()
                    j = reader._verdict(sent, g.selection.quotes, q.question, g.subject.words, read)
                    v[flag or "base"] = (str(j.support), j.reason)
                J.OFF = set()
                rows.append({"id": q.id, "sentence": i, "text": sent, "answerable": q.answerable, "class": saved["class"],
                             "facts": len(facts_found(sent, q.key_facts)) if q.answerable else 0,
                             "nfacts": len(q.key_facts) if q.answerable else 0, "v": v})
            print(q.id, file=sys.stderr, flush=True)
    finally:
        engine.close()
summary = {f: sum(r["v"][f][0] != r["v"]["base"][0] for r in rows) for f in FLAGS}
print(json.dumps({"sentences": len(rows), "changed": summary}))
Path(out).write_text(json.dumps({"runs": runs, "rows": rows, "summary": summary}, indent=1))
