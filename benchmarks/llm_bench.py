"""Measure a model through GenaiChatClient against a bare onnxruntime-genai loop.

    python -m benchmarks.llm_bench [MODEL_DIR ...] [--prompt-tokens 600] [--new-tokens 128]

For each model: load time, time to first token (from the call: template and tokenisation
included; median over rounds) and decode speed (tokens per second after the first token, over
all rounds), for EdgeChat and for a bare loop over the same prompt text. Both decode greedily,
so they generate the same tokens; EdgeChat's throughput is printed as a share of the bare
loop's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
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


def bare_loop(og, model, tokenizer, prompt: str, new_tokens: int) -> Iterator[float]:
    """The minimal streaming loop of onnxruntime-genai's examples, as a generator that yields
    after each token (so it can run in lockstep with EdgeChat). The first value is the time to
    the first token, the others are the times of each further token."""
    t0 = time.perf_counter()
    ids = tokenizer.encode(prompt)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + new_tokens, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(ids)
    stream = tokenizer.create_stream()
    while not gen.is_done():
        gen.generate_next_token()
        stream.decode(gen.get_next_tokens()[0])
        yield time.perf_counter() - t0
        t0 = time.perf_counter()


def bench(model_dir: Path, prompt_tokens: int, new_tokens: int, rounds: int) -> dict:
    """Per round: one whole answer through EdgeChat and one through the bare loop, the order
    alternating between rounds: time to first token, then the time of each further token.

    Until 2026-12-02 the two ran in lockstep, one token of each in turn, so that both saw the
    same machine load; with Qwen2.5-Coder-0.5B that put EdgeChat at 0.92 of the bare loop, where
    whole answers one after the other put it at 0.99 (4 rounds, quiet machine): two generators
    taking turns on one model slow each other, and not evenly. Alternating whole answers keeps
    load from other processes falling on both alike over the rounds."""
    import onnxruntime_genai as og

    from edgechat.core.llm.genai_client import GenaiChatClient

    client = GenaiChatClient(model_dir)
    messages = make_messages(client, prompt_tokens)
    prompt = client.format_prompt(messages)
    t = time.perf_counter()
    model = og.Model(str(model_dir))
    tokenizer = og.Tokenizer(model)
    bare_load = time.perf_counter() - t
    opts = ChatOptions(max_new_tokens=new_tokens)
    for _ in client.stream(messages, ChatOptions(max_new_tokens=4)):  # warm up both
        pass
    for _ in bare_loop(og, model, tokenizer, prompt, 4):
        pass

    def edgechat_answer() -> Iterator[float]:  # as bare_loop: the first token's time, then each further one's
        t0 = time.perf_counter()
        for update in client.stream(messages, opts):
            if update.done:
                return
            yield time.perf_counter() - t0
            t0 = time.perf_counter()

    ec_ttft, bare_ttft, ec_steps, bare_steps, pairs = [], [], [], [], []
    n_ec = n_bare = 0
    for i in range(rounds):
        answers = [("ec", edgechat_answer()), ("bare", bare_loop(og, model, tokenizer, prompt, new_tokens))]
        rates = {}
        for who, steps in answers if i % 2 == 0 else answers[::-1]:
            times = list(steps)
            (ec_ttft if who == "ec" else bare_ttft).append(times[0])
            (ec_steps if who == "ec" else bare_steps).extend(times[1:])
            rates[who] = (len(times) - 1) / sum(times[1:])
            if who == "ec":
                n_ec = len(times)
            else:
                n_bare = len(times)
        pairs.append(rates["ec"] / rates["bare"])

    ec_tps = 1 / statistics.mean(ec_steps)
    bare_tps = 1 / statistics.mean(bare_steps)
    out = {
        "model": model_dir.name,
        "size_mb": round(sum(f.stat().st_size for f in model_dir.rglob("*") if f.is_file()) / 1e6, 1),
        "load_seconds": round(client.load_seconds, 3),
        "bare_load_seconds": round(bare_load, 3),
        "prompt_tokens": client.last_stats["prompt_tokens"],
        "new_tokens": n_ec,
        "bare_new_tokens": n_bare,
        "edgechat_ttft": round(statistics.median(ec_ttft), 4),
        "bare_ttft": round(statistics.median(bare_ttft), 4),
        "edgechat_tps": round(ec_tps, 2),
        "bare_tps": round(bare_tps, 2),
        "rounds": rounds,
    }
    out["throughput_ratio"] = round(ec_tps / bare_tps, 4)
    # the same, as the median over rounds of the ratio within a round: less sensitive to load
    # from other processes that comes and goes between rounds
    out["paired_throughput_ratio"] = round(statistics.median(pairs), 4)
    out["added_ttft_percent"] = round(100 * (out["edgechat_ttft"] / out["bare_ttft"] - 1), 2)
    return out


# --------------------------------------------------------------------------- answer quality

QUESTIONS = [  # (context, question, any of these in the answer counts as right)
    ("The Zephyr 3000 vacuum weighs 4.2 kilograms and its battery lasts 55 minutes.",
     "How long does the Zephyr 3000 battery last?", ["55"]),
    ("Mount Kilimanjaro is located in Tanzania and rises to 5,895 metres.",
     "In which country is Mount Kilimanjaro?", ["tanzania"]),
    ("The company's headquarters moved from Oslo to Bergen in 2019.",
     "Where are the company's headquarters now?", ["bergen"]),
    ("Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
     "In what year did Marie Curie win the Nobel Prize in Chemistry?", ["1911"]),
    ("To reset the router, hold the red button on the back for ten seconds.",
     "How do I reset the router?", ["red button", "ten seconds", "10 seconds"]),
    ("The library opens at 9 am and closes at 6 pm on weekdays; it is closed on Sundays.",
     "Is the library open on Sunday?", ["closed", "no"]),
    ("Python was created by Guido van Rossum and first released in 1991.",
     "Who created Python?", ["guido"]),
    ("The recipe needs 200 grams of flour, two eggs and 300 ml of milk.",
     "How much flour does the recipe need?", ["200"]),
    ("Invoices must be paid within 30 days; late payments incur a 2% fee.",
     "What is the fee for late payment?", ["2%", "2 percent", "two percent"]),
    ("The patient was prescribed amoxicillin, 500 mg three times a day for seven days.",
     "What dose of amoxicillin was prescribed?", ["500"]),
    ("Jupiter is the largest planet in the solar system.", "Which planet is the largest?", ["jupiter"]),
    ("The meeting was rescheduled from Tuesday to Thursday at 3 pm.", "When is the meeting now?", ["thursday"]),
]

PROSE = (
    "The town library was built in 1908 with money raised by the people who lived there. For most "
    "of its history it was a single reading room with tall windows, a fireplace and shelves that "
    "reached the ceiling. In the nineteen-sixties a children's wing was added, and later a small "
    "room for newspapers and maps. Today the library lends books, films and music, runs reading "
    "groups for adults and teenagers, and offers free computer lessons on Tuesday mornings. Its "
    "volunteers also visit people who cannot leave their homes, bringing them books every two "
    "weeks. The building was restored ten years ago: the roof was replaced, the windows were "
    "repaired, and a lift was installed so that every floor can be reached without stairs. Each "
    "summer the library organises a reading challenge for children, who collect stickers for "
    "every book they finish and receive a certificate at a party in September. "
)


def quality(model_dir: Path) -> dict:
    """Context questions answered right (greedy), and perplexity on a paragraph of prose."""
    import math

    import numpy as np
    import onnxruntime_genai as og

    from edgechat.core.llm.genai_client import GenaiChatClient

    client = GenaiChatClient(model_dir)
    right = 0
    for context, question, answers in QUESTIONS:
        msgs = [
            ChatMessage(Role.SYSTEM, "Answer the question using only the context."),
            ChatMessage(Role.USER, f"Context: {context}\n\nQuestion: {question}"),
        ]
        text = ""
        for u in client.stream(msgs, ChatOptions(max_new_tokens=40)):
            text = u.text
        right += any(a in text.lower() for a in answers)
    client.close()

    model = og.Model(str(model_dir))
    ids = og.Tokenizer(model).encode(PROSE)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + 2)
    gen = og.Generator(model, params)
    gen.append_tokens(ids[:1])
    nll = 0.0
    for i in range(1, len(ids)):
        logits = gen.get_logits()[0, -1].astype(np.float64)
        top = logits.max()
        nll += top + math.log(np.exp(logits - top).sum()) - logits[ids[i]]
        gen.append_tokens(ids[i : i + 1])
    return {
        "model": model_dir.name,
        "questions_right": f"{right}/{len(QUESTIONS)}",
        "perplexity": round(math.exp(nll / (len(ids) - 1)), 2),
        "perplexity_tokens": len(ids),
    }


def main(argv: list[str] | None = None) -> int:
    from edgechat.core import paths

    p = argparse.ArgumentParser(prog="python -m benchmarks.llm_bench")
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--prompt-tokens", type=int, default=600)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--quality", action="store_true", help="measure answer quality instead of speed")
    args = p.parse_args(argv)
    models = args.models or sorted(d for d in paths.llm_dir().glob("smollm2-*") if d.is_dir())
    for m in models:
        if args.quality:
            print(json.dumps(quality(m)), flush=True)
        else:
            print(json.dumps(bench(m, args.prompt_tokens, args.new_tokens, args.rounds)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
