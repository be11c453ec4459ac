"""Time to the first token through a model server on loopback: EdgeChat's client against the
least any client can do, in the same run.

    python -m benchmarks.server_latency [--rounds 5] [--words 350] [--max-tokens 32] [--genai NAME]

It starts llama-cpp-python's OpenAI-compatible server (tests/llama_server.py: the wheel that
scripts/llama_server.sh builds, Qwen2.5-Coder-0.5B-Instruct's GGUF) on a free loopback port and
asks it the same prompts three ways, in turn, each round with a prompt of its own (a unique
first line: the server keeps the last prompt's cache):

  bare      a bare HTTP request (http.client, no parsing beyond finding the first "content"):
            the server's own time to its first token, as any client on this machine sees it
  edgechat  edgechat.core.llm.server_client.ServerChatClient.stream, as the app asks
  genai     (with --genai NAME) the same model run in process by onnxruntime-genai
            (GenaiChatClient on the installed model folder NAME), for the engine comparison

The goal (issue 35): edgechat within 10 % of bare. Medians over the rounds, the median of the
round-by-round ratio (steadier on a shared machine), and tokens/s after the first token. JSON on stdout, with provenance (benchmarks.common.with_provenance).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from urllib.parse import urlsplit

from benchmarks.common import with_provenance
from edgechat.core.llm.server_client import ServerChatClient
from edgechat.core.records import ChatMessage, ChatOptions, Role

PASSAGE = ("The maintenance schedule says each pump is inspected every {n} days, the filters are replaced "
           "after {m} hours of running, and the log is signed by the duty engineer. ")


def prompt(i: int, words: int) -> list[ChatMessage]:
    body = ""
    k = 0
    while len(body.split()) < words:
        body += PASSAGE.format(n=7 + k % 5, m=200 + 50 * (k % 7))
        k += 1
    return [ChatMessage(Role.USER, f"Request {i} ({time.time_ns()}).\n\n{body}\nHow often is a pump inspected?")]


def bare(url: str, model: str, messages: list[ChatMessage], max_tokens: int) -> dict:
    """POST /v1/chat/completions with http.client; the time to the first content chunk."""
    parts = urlsplit(url)
    body = json.dumps({"model": model, "stream": True, "max_tokens": max_tokens, "temperature": 0.0,
                       "messages": [{"role": m.role.value, "content": m.content} for m in messages]})
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    conn.request("POST", parts.path + "/chat/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = None
    chunks = 0
    last = t0
    for raw in resp:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:") or line == "data: [DONE]":
            continue
        data = json.loads(line[5:])
        if data.get("choices") and (data["choices"][0].get("delta") or {}).get("content"):
            chunks += 1
            last = time.perf_counter()
            if first is None:
                first = last - t0
    conn.close()
    return {"first_token_s": first, "tokens_per_s": (chunks - 1) / (last - t0 - first) if first and chunks > 1
            else None}


def through(client, messages: list[ChatMessage], max_tokens: int) -> dict:
    t0 = time.perf_counter()
    first = None
    n = 0
    last = t0
    for u in client.stream(messages, ChatOptions(max_new_tokens=max_tokens, repetition_penalty=1.0)):
        if u.delta:
            n += 1
            last = time.perf_counter()
            if first is None:
                first = last - t0
    return {"first_token_s": first, "tokens_per_s": (n - 1) / (last - t0 - first) if first and n > 1 else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--words", type=int, default=350, help="words of passage in each prompt")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--genai", default="", metavar="NAME", help="also the installed model NAME in process")
    args = ap.parse_args(argv)
    load_before = list(os.getloadavg())
    from tests.llama_server import LlamaServer

    genai = None
    if args.genai:
        from edgechat.core.llm.genai_client import GenaiChatClient
        from edgechat.core.llm.manager import ModelManager

        genai = GenaiChatClient(ModelManager().get_model(args.genai).path)
    runs: dict[str, list[dict]] = {"bare": [], "edgechat": [], **({"genai": []} if genai else {})}
    with LlamaServer(n_ctx=4096) as server:
        client = ServerChatClient(server.url, server.model, timeout=600)
        through(client, prompt(-1, 20), 4)  # warm: the model's first use, the connection
        for i in range(args.rounds):
            order = list(runs) if i % 2 == 0 else list(reversed(runs))
            for j, how in enumerate(order):
                msgs = prompt(i * 10 + j, args.words)
                if how == "bare":
                    r = bare(server.url, server.model, msgs, args.max_tokens)
                elif how == "edgechat":
                    r = through(client, msgs, args.max_tokens)
                else:
                    r = through(genai, msgs, args.max_tokens)
                runs[how].append(r)
                print(json.dumps({"round": i, "how": how, **r}), file=sys.stderr, flush=True)
        prompt_tokens = client.count_tokens(prompt(0, args.words)[0].content)
    out: dict = {"server": "llama-cpp-python 0.3.36 (llama.cpp), loopback", "model": "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
                 "rounds": args.rounds, "prompt_words": args.words, "prompt_tokens_estimated": prompt_tokens,
                 "max_tokens": args.max_tokens, "results": {}}
    for how, rs in runs.items():
        firsts = [r["first_token_s"] for r in rs if r["first_token_s"]]
        rates = [r["tokens_per_s"] for r in rs if r["tokens_per_s"]]
        out["results"][how] = {"first_token_s_median": round(statistics.median(firsts), 3),
                               "first_token_s": [round(x, 3) for x in firsts],
                               "tokens_per_s_median": round(statistics.median(rates), 1) if rates else None}
    b, e = out["results"]["bare"]["first_token_s_median"], out["results"]["edgechat"]["first_token_s_median"]
    out["edgechat_over_bare"] = round(e / b, 3)
    # Round by round (asked one after the other, so under the same load): the steadier figure
    # on a shared machine.
    pairs = [x["first_token_s"] / y["first_token_s"] for x, y in zip(runs["edgechat"], runs["bare"])
             if x["first_token_s"] and y["first_token_s"]]
    out["edgechat_over_bare_by_round_median"] = round(statistics.median(pairs), 3)
    print(json.dumps(with_provenance(out, load_before), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
