"""Measure a model through GenaiChatClient against a bare onnxruntime-genai loop.

    python -m edgechat.core.llm.bench [MODEL_DIR ...] [--prompt-tokens 600] [--new-tokens 128]

For each model: load time, then, alternating EdgeChat and the bare loop over several rounds,
time to first token (from the call, template and tokenisation included) and decode speed
(tokens per second after the first token). Both run the same prompt text, greedily, so they
generate the same tokens. Medians are printed, and EdgeChat's throughput as a share of the
bare loop's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from edgechat.core.records import ChatMessage, ChatOptions, Role

PASSAGE = (
    "The Zephyr 3000 is a cordless vacuum cleaner that weighs 4.2 kilograms. Its lithium-ion "
    "battery lasts 55 minutes on the eco setting and 18 minutes on the boost setting, and it "
    "recharges fully in three and a half hours. The dust container holds 0.8 litres and is "
    "emptied by pressing the red lever on the side. The filter should be rinsed in cold water "
    "once a month and left to dry for 24 hours before it is put back. "
)


def make_messages(client, prompt_tokens: int) -> list[ChatMessage]:
    system = ChatMessage(Role.SYSTEM, "Answer from the sources below and cite them as [n].")
    question = ChatMessage(Role.USER, "Describe the Zephyr 3000 in detail: battery, weight, container and filter care.")
    sentences = [s.strip() + "." for s in PASSAGE.split(". ") if s.strip()]
    context = ""
    n = 0
    while True:
        n += 1
        sentence = sentences[n % len(sentences)].rstrip(".") + "."
        candidate = context + (f"\n[{n // len(sentences) + 1}] " if n % len(sentences) == 1 else " ") + sentence
        msgs = [system, ChatMessage(Role.USER, candidate, pinned=True), question]
        if len(client._tokenizer.encode(client.format_prompt(msgs))) > prompt_tokens:
            break
        context = candidate
    return [system, ChatMessage(Role.USER, context.strip(), pinned=True), question]


def bare_loop(og, model, tokenizer, prompt: str, new_tokens: int) -> dict:
    """The minimal streaming loop of onnxruntime-genai's examples."""
    t0 = time.perf_counter()
    ids = tokenizer.encode(prompt)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + new_tokens, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(ids)
    stream = tokenizer.create_stream()
    text = []
    n = 0
    t_first = t_last = None
    while not gen.is_done():
        gen.generate_next_token()
        tok = gen.get_next_tokens()[0]
        n += 1
        t_last = time.perf_counter()
        if t_first is None:
            t_first = t_last
        text.append(stream.decode(tok))
    return {
        "ttft": t_first - t0,
        "tps": (n - 1) / (t_last - t_first) if n > 1 else 0.0,
        "tokens": n,
        "prompt_tokens": len(ids),
    }


def edgechat_call(client, messages, new_tokens: int) -> dict:
    for _u in client.stream(messages, ChatOptions(max_new_tokens=new_tokens)):
        pass
    s = client.last_stats
    return {
        "ttft": s["first_token_seconds"],
        "tps": s.get("tokens_per_second", 0.0),
        "tokens": s["new_tokens"],
        "prompt_tokens": s["prompt_tokens"],
    }


def bench(model_dir: Path, prompt_tokens: int, new_tokens: int, rounds: int) -> dict:
    import onnxruntime_genai as og

    from edgechat.core.llm.genai_client import GenaiChatClient

    client = GenaiChatClient(model_dir)
    messages = make_messages(client, prompt_tokens)
    prompt = client.format_prompt(messages)
    t = time.perf_counter()
    model = og.Model(str(model_dir))
    tokenizer = og.Tokenizer(model)
    bare_load = time.perf_counter() - t
    edgechat_call(client, messages, 8)  # warm up both
    bare_loop(og, model, tokenizer, prompt, 8)
    ec, bare = [], []
    for i in range(rounds):  # alternate which goes first, against drifts in machine speed
        if i % 2 == 0:
            ec.append(edgechat_call(client, messages, new_tokens))
            bare.append(bare_loop(og, model, tokenizer, prompt, new_tokens))
        else:
            bare.append(bare_loop(og, model, tokenizer, prompt, new_tokens))
            ec.append(edgechat_call(client, messages, new_tokens))

    def med(rows, key):
        return statistics.median(r[key] for r in rows)

    out = {
        "model": model_dir.name,
        "size_mb": round(sum(f.stat().st_size for f in model_dir.rglob("*") if f.is_file()) / 1e6, 1),
        "load_seconds": round(client.load_seconds, 3),
        "bare_load_seconds": round(bare_load, 3),
        "prompt_tokens": ec[0]["prompt_tokens"],
        "new_tokens": ec[0]["tokens"],
        "bare_new_tokens": bare[0]["tokens"],
        "edgechat_ttft": round(med(ec, "ttft"), 4),
        "bare_ttft": round(med(bare, "ttft"), 4),
        "edgechat_tps": round(med(ec, "tps"), 2),
        "bare_tps": round(med(bare, "tps"), 2),
    }
    out["throughput_ratio"] = round(out["edgechat_tps"] / out["bare_tps"], 4)
    out["added_ttft_percent"] = round(100 * (out["edgechat_ttft"] / out["bare_ttft"] - 1), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    from edgechat.core import paths

    p = argparse.ArgumentParser(prog="python -m edgechat.core.llm.bench")
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--prompt-tokens", type=int, default=600)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--rounds", type=int, default=6)
    args = p.parse_args(argv)
    models = args.models or sorted(d for d in paths.llm_dir().glob("smollm2-*") if d.is_dir())
    for m in models:
        print(json.dumps(bench(m, args.prompt_tokens, args.new_tokens, args.rounds)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
