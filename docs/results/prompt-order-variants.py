"""Per answerable question of the dumps (prompt-order-dump.py), whether the prompt holds every key fact when built four ways, at 40, 60 and 80 words."""
import collections
import json
import sys
from types import SimpleNamespace as NS

from benchmarks.answers import holds
from edgechat.core.answering.answer import prompt_quotes

rows = [r for f in sys.argv[1:] for r in json.load(open(f)) if r["answerable"]]

def chosen(r):
    return sorted([q for q in r["quotes"] if q["chosen"] is not None], key=lambda q: q["chosen"])

def follows(a, b, r):  # b is the quote right after a in its passage
    same = sorted([q for q in r["quotes"] if q["k"][0] == a["k"][0]], key=lambda q: q["k"][1])
    later = [q for q in same if q["k"][1] > a["k"][1]]
    return bool(later) and later[0]["k"] == b["k"]

def budget(r, words):
    return words

def fit(r, qs, words):
    objs = [NS(text=q["text"], reading=q["reading"]) for q in qs]
    return prompt_quotes(r["question"], objs, words)

def v_current(r, w):
    return fit(r, chosen(r), w)

def v_score(r, w):
    return fit(r, sorted(chosen(r), key=lambda q: -q["score"]), w)

def v_anchors_first(r, w):
    c = chosen(r); anchors, followers = [], []
    for i, q in enumerate(c):
        (followers if i and follows(c[i-1], q, r) and c[i-1] in anchors else anchors).append(q)
    return fit(r, anchors + followers, w)

def v_ranked(r, w):
    return fit(r, sorted(r["quotes"], key=lambda q: -q["score"])[:12], w)

VARIANTS = {"current": v_current, "by score": v_score, "anchors first": v_anchors_first, "ranked top": v_ranked}
for w in (40, 60, 80):
    for name, f in VARIANTS.items():
        held = collections.Counter(); words = []
        for r in rows:
            p = f(r, w)
            held[r["set"]] += holds("\n".join(x.reading for x in p), r["key_facts"])
            words.append(sum(len(x.text.split()) for x in p))
        words.sort()
        print(f"{w:3d} {name:14s} {sum(held.values()):4d}/{len(rows)} median words {words[len(words)//2]:3d} ", dict(sorted(held.items())))
chosen_held = sum(holds("\n".join(q["reading"] for q in chosen(r)), r["key_facts"]) for r in rows)
print("chosen", chosen_held)
