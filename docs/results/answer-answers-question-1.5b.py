"""Asks the 1.5B, of each of its shown answers in docs/results/answers-heldout41..57.json, whether the
answer gives what the question asks for. Run from the checkout: python docs/results/answer-answers-question-1.5b.py"""
import json
import re
import sys
import time

sys.path.insert(0, '.')

from edgechat.core import paths
from edgechat.core.answering.answer import YOUR_DOCUMENTS_SAY
from edgechat.core.llm.genai_client import GenaiChatClient
from edgechat.core.records import ChatMessage, Role

client = GenaiChatClient(paths.llm_dir() / "qwen2.5-coder-1.5b-instruct-int4", name="qwen2.5-coder-1.5b-instruct-int4")
SYS = "Answer Yes if the answer gives what the question asks for, and No if it does not. Answer with one word."
out = []
for n in range(41, 58):
    d = json.load(open(f'docs/results/answers-heldout{n}.json'))
    for r in d['rows']:
        if r['client'] != 'qwen2.5-coder-1.5b-instruct-int4' or r['declined']:
            continue
        ans = r['shown'].split(YOUR_DOCUMENTS_SAY)[0].strip()
        if not ans or ans.startswith('No answer is shown'):
            continue
        ans = re.sub(r'\s*\[\d+\]', '', ans)
        t = time.perf_counter()
        p = client.p_yes([ChatMessage(Role.SYSTEM, SYS), ChatMessage(Role.USER, f"Question: {r['question']}\nAnswer: {ans}")])
        out.append({'id': r['id'], 'half': n, 'class': r['class'], 'answerable': r['answerable'], 'p': p, 's': time.perf_counter() - t, 'q': r['question'], 'a': ans})
        print(r['id'], r['class'], round(p, 3), flush=True)
json.dump(out, open('docs/results/answer-answers-question-1.5b-heldout41-57.json', 'w'), indent=1)
