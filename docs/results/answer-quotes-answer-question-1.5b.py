"""Offline: P(yes) that the quotes shown for a bare yes/no draft answer the question (1.5B)."""
import json, re, sys, time
from edgechat.core.llm import manager
from edgechat.core.llm.genai_client import GenaiChatClient
from edgechat.core.records import ChatMessage, Role
from edgechat.core.answering.citations import MARKER_RE
PROMPTS = {
 "answers": "Answer Yes if the document answers the question, and No if it does not. Answer with one word.",
}
name = "qwen2.5-coder-1.5b-instruct-int4"
model = next(m for m in manager.list_models() if m.name == name)
client = GenaiChatClient(model.path)
out = []
halves = [int(x) for x in sys.argv[1].split(",")]
for n in halves:
    d = json.load(open(f"/work/main/docs/results/answers-heldout{n}.json"))
    for r in d["rows"]:
        if r.get("client") != name or not r["shown"].startswith("Your documents say:"):
            continue
        lines = r["shown"].split("\n")[1:]
        doc = "\n".join(" ".join(MARKER_RE.sub(" ", l).split()) for l in lines if l.strip())
        row = {"half": n, "id": r["id"], "class": r["class"], "answerable": r["answerable"]}
        for k, system in PROMPTS.items():
            asked = f"Document: {doc}\nQuestion:"
            msgs = [ChatMessage(Role.SYSTEM, system), ChatMessage(Role.USER, f"{asked} {r['question']}")]
            t = time.perf_counter()
            row[k] = round(client.p_yes(msgs, kept=asked), 3)
            row["s"] = round(time.perf_counter() - t, 2)
        out.append(row)
        print(json.dumps(row), flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)
