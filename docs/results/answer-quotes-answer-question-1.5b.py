"""The 1.5B asked whether the quotes shown for its bare yes or no answer the question: P(Yes) from
its first token, over saved answers runs (docs/answers-measurements.md, "Tried and not kept").

    python docs/results/answer-quotes-answer-question-1.5b.py 63,64,...,71 OUT.json
"""

import json
import sys
import time

from edgechat.core.answering.citations import MARKER_RE
from edgechat.core.llm import manager
from edgechat.core.llm.genai_client import GenaiChatClient
from edgechat.core.records import ChatMessage, Role

SYSTEM = "Answer Yes if the document answers the question, and No if it does not. Answer with one word."
MODEL = "qwen2.5-coder-1.5b-instruct-int4"


def main() -> None:
    model = next(m for m in manager.list_models() if m.name == MODEL)
    client = GenaiChatClient(model.path)
    out = []
    for half in (int(x) for x in sys.argv[1].split(",")):
        run = json.load(open(f"docs/results/answers-heldout{half}.json", encoding="utf-8"))
        for r in run["rows"]:
            if r.get("client") != MODEL or not r["shown"].startswith("Your documents say:"):
                continue
            lines = [" ".join(MARKER_RE.sub(" ", line).split()) for line in r["shown"].split("\n")[1:]]
            asked = "Document: " + "\n".join(line for line in lines if line) + "\nQuestion:"
            messages = [ChatMessage(Role.SYSTEM, SYSTEM), ChatMessage(Role.USER, f"{asked} {r['question']}")]
            t = time.perf_counter()
            p = client.p_yes(messages, kept=asked)
            row = {"half": half, "id": r["id"], "class": r["class"], "answerable": r["answerable"],
                   "answers": round(p, 3), "s": round(time.perf_counter() - t, 2)}
            out.append(row)
            print(json.dumps(row), flush=True)
    json.dump(out, open(sys.argv[2], "w", encoding="utf-8"), indent=1)


if __name__ == "__main__":
    main()
