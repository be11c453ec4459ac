"""GenaiChatClient on the real default model (SmolLM2-135M-Instruct, onnxruntime-genai)."""

from __future__ import annotations

import json
import threading

import pytest

from edgechat.core.llm.client import ChatClient
from edgechat.core.llm.genai_client import (
    GenaiChatClient,
    ModelLoadError,
    chatml,
    prepare_messages,
)
from edgechat.core.records import ChatMessage, ChatOptions, Role

pytestmark = pytest.mark.slow

SYSTEM = ChatMessage(Role.SYSTEM, "You are a helpful assistant. Answer briefly.")
QUESTION = ChatMessage(Role.USER, "What is the capital of France?")
LONG_ASK = ChatMessage(Role.USER, "Write a long story about a dragon who learns to cook.")


def run(client, messages, options, cancel=None):
    updates = list(client.stream(messages, options, cancel))
    return updates, updates[-1]


def test_is_a_chat_client(client):
    assert isinstance(client, ChatClient)
    assert client.context_length == 8192  # from genai_config.json
    assert client.load_seconds > 0
    assert client.name == "smollm2-135m-instruct-int8"


def test_deltas_concatenate_to_the_final_text(client):
    updates, last = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=40))
    deltas = [u.delta for u in updates[:-1]]
    assert all(not u.done for u in updates[:-1]) and last.done
    assert len(deltas) >= 2 and all(deltas)
    assert "".join(deltas) == last.text
    # every intermediate update carries the text so far
    running = ""
    for u in updates[:-1]:
        running += u.delta
        assert u.text == running
    assert "Paris" in last.text
    assert last.stop_reason in ("eos", "max_tokens")


def test_text_equals_decoding_all_generated_tokens(client):
    """The streamed text is exactly what the tokenizer decodes from the generated tokens."""
    _, last = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=30))
    n = client.last_stats["new_tokens"]
    ids = list(client._tokenizer.encode(last.text))
    assert client._tokenizer.decode(ids) == last.text
    assert abs(len(ids) - n) <= 2


def test_greedy_is_deterministic(client):
    opts = ChatOptions(temperature=0.0, max_new_tokens=48)
    _, a = run(client, [SYSTEM, LONG_ASK], opts)
    _, b = run(client, [SYSTEM, LONG_ASK], opts)
    assert a.text == b.text and len(a.text) > 20


def test_sampling_runs_and_differs_from_call_to_call(client):
    opts = ChatOptions(temperature=1.0, top_p=0.95, max_new_tokens=24)
    texts = {run(client, [SYSTEM, LONG_ASK], opts)[1].text for _ in range(3)}
    assert all(texts)
    assert len(texts) >= 2


def test_max_new_tokens_is_respected(client):
    _, last = run(client, [SYSTEM, LONG_ASK], ChatOptions(max_new_tokens=7))
    assert last.stop_reason == "max_tokens"
    assert client.last_stats["new_tokens"] == 7
    assert client.count_tokens(last.text) <= 8


def test_zero_new_tokens(client):
    updates, last = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=0))
    assert updates == [last] and last.text == "" and last.stop_reason == "max_tokens"


def test_context_length_stops_generation(client, monkeypatch):
    prompt_tokens = len(client._tokenizer.encode(client.format_prompt([SYSTEM, LONG_ASK])))
    monkeypatch.setattr(client, "context_length", prompt_tokens + 4)
    _, last = run(client, [SYSTEM, LONG_ASK], ChatOptions(max_new_tokens=100))
    assert last.stop_reason == "context"
    assert client.last_stats["new_tokens"] == 4


def test_cancel_mid_stream_stops_at_once(client):
    cancel = threading.Event()
    seen = 0
    last = None
    for u in client.stream([SYSTEM, LONG_ASK], ChatOptions(max_new_tokens=200), cancel):
        if u.done:
            last = u
            break
        seen += 1
        if seen == 3:
            cancel.set()
    assert last is not None and last.stop_reason == "cancelled"
    assert seen == 3
    assert client.last_stats["new_tokens"] == 3  # nothing generated after the cancel


def test_cancel_from_another_thread_within_one_token(client):
    cancel = threading.Event()
    produced = []
    at_cancel = []

    def canceller():
        while len(produced) < 5:
            threading.Event().wait(0.001)
        at_cancel.append(client.last_stats.get("new_tokens", 0))
        cancel.set()

    t = threading.Thread(target=canceller)
    t.start()
    last = None
    for u in client.stream([SYSTEM, LONG_ASK], ChatOptions(max_new_tokens=300), cancel):
        if u.done:
            last = u
        else:
            produced.append(u.delta)
    t.join(5)
    assert last.stop_reason == "cancelled"
    assert client.last_stats["new_tokens"] - at_cancel[0] <= 1


def test_cancel_before_start_generates_nothing(client):
    cancel = threading.Event()
    cancel.set()
    updates, last = run(client, [SYSTEM, QUESTION], ChatOptions(), cancel)
    assert updates == [last] and last.stop_reason == "cancelled" and last.text == ""


def test_prompt_longer_than_the_context_raises_at_once(client):
    huge = ChatMessage(Role.USER, "word " * (client.context_length + 50))
    with pytest.raises(ValueError, match="tokens"):
        client.stream([SYSTEM, huge], ChatOptions())  # before any iteration


def test_count_tokens_matches_the_tokenizer(client, smollm2_dir):
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(smollm2_dir / "tokenizer.json"))
    for text in ["", "hello", "The Zephyr 3000 weighs 4.2 kg.", "naïve café — 東京 [1][2]", "a\n\nb  c"]:
        expected = len(reference.encode(text, add_special_tokens=False).ids)
        assert client.count_tokens(text) == expected == len(client._tokenizer.encode(text))


def test_chat_template_puts_system_and_user_text_in_order(client):
    prompt = client.format_prompt([SYSTEM, QUESTION])
    assert prompt == (
        "<|im_start|>system\nYou are a helpful assistant. Answer briefly.<|im_end|>\n"
        "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_history_and_pinned_context_in_the_prompt(client):
    msgs = [
        SYSTEM,
        ChatMessage(Role.USER, "Hi"),
        ChatMessage(Role.ASSISTANT, "Hello! How can I help?"),
        ChatMessage(Role.USER, "[1] The Zephyr battery lasts 55 minutes.", pinned=True),
        ChatMessage(Role.USER, "How long does the battery last?"),
    ]
    prompt = client.format_prompt(msgs)
    order = [SYSTEM.content, "Hi", "Hello! How can I help?", "[1] The Zephyr", "How long does"]
    positions = [prompt.index(s) for s in order]
    assert positions == sorted(positions)
    # the pinned context and the question are one user turn
    assert "<|im_start|>user\n[1] The Zephyr battery lasts 55 minutes.\n\nHow long does the battery last?<|im_end|>" in prompt
    assert prompt.count("<|im_start|>user") == 2


def test_the_three_template_renderers_agree(client):
    msgs = prepare_messages([SYSTEM, ChatMessage(Role.USER, "ctx", pinned=True), QUESTION])
    genai = client._render("genai", msgs)
    assert client._render("jinja", msgs) == genai
    assert chatml(msgs) == genai


def test_default_system_prompt_of_the_template_when_none_is_given(client):
    prompt = client.format_prompt([QUESTION])
    assert prompt.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_last_stats(client):
    run(client, [SYSTEM, LONG_ASK], ChatOptions(max_new_tokens=20))
    s = client.last_stats
    assert s["stop_reason"] == "max_tokens" and s["new_tokens"] == 20
    assert 0 < s["first_token_seconds"] < s["total_seconds"]
    assert s["tokens_per_second"] > 1
    assert s["prompt_tokens"] > 10


def test_one_generation_at_a_time(client):
    opts = ChatOptions(max_new_tokens=24)
    expected = run(client, [SYSTEM, LONG_ASK], opts)[1].text
    results = []

    def worker():
        results.append(run(client, [SYSTEM, LONG_ASK], opts)[1].text)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert results == [expected] * 3


def test_abandoning_a_stream_frees_the_client(client):
    gen = client.stream([SYSTEM, LONG_ASK], ChatOptions(max_new_tokens=50))
    next(gen)
    gen.close()
    assert client.last_stats["stop_reason"] == "abandoned"
    _, last = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=5))
    assert last.done


def test_folder_without_genai_config_is_refused(tmp_path):
    with pytest.raises(ModelLoadError, match="genai_config.json"):
        GenaiChatClient(tmp_path)


def test_broken_model_folder_is_refused(tmp_path, smollm2_dir):
    (tmp_path / "genai_config.json").write_text((smollm2_dir / "genai_config.json").read_text())
    with pytest.raises(ModelLoadError, match="cannot load"):
        GenaiChatClient(tmp_path)


# ------------------------------------------------------------------ no model needed


def test_prepare_messages_merges_pinned_context_into_the_next_user_turn():
    msgs = [
        ChatMessage(Role.SYSTEM, "sys"),
        ChatMessage(Role.USER, "ctx1", pinned=True),
        ChatMessage(Role.USER, "ctx2", pinned=True),
        ChatMessage(Role.USER, "q"),
    ]
    assert prepare_messages(msgs) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "ctx1\n\nctx2\n\nq"},
    ]


def test_prepare_messages_keeps_a_trailing_or_stranded_pinned_message():
    msgs = [
        ChatMessage(Role.USER, "ctx", pinned=True),
        ChatMessage(Role.ASSISTANT, "a"),
        ChatMessage(Role.USER, "late", pinned=True),
    ]
    assert prepare_messages(msgs) == [
        {"role": "user", "content": "ctx"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "late"},
    ]
    assert json.loads(json.dumps(prepare_messages(msgs)))  # plain data


def test_loop_detector_stops_repeated_spans_and_lines():
    from edgechat.core.llm.genai_client import _LoopDetector

    d = _LoopDetector(window=4)
    assert not any(d.repeats(t) for t in [1, 2, 3, 4, 5, 6, 7])
    assert [d.repeats(t) for t in [1, 2, 3, 4]] == [False, False, False, True]
    d = _LoopDetector()
    assert not d.line_repeats("5. Use the read.csv function to load it.\n")
    assert not d.line_repeats("5. Use the read.csv function to load it.\n6. Something different here.\n")
    assert d.line_repeats("...\n7. Use the read.csv function to load it.\n")
    assert not _LoopDetector().line_repeats("ok\n")  # too short to judge


def test_the_system_message_is_read_once_and_the_answer_does_not_depend_on_the_last(client, smollm2_dir):
    """A prompt with the last one's system message is read from the end of it; the answer is the
    same as a new client's, also after the last generation ended at EOS or was cut short."""
    greedy = ChatOptions(temperature=0.0, max_new_tokens=24)
    fresh = GenaiChatClient(smollm2_dir)
    try:
        for first, options in ((QUESTION, ChatOptions(temperature=0.0, max_new_tokens=60)),
                               (LONG_ASK, ChatOptions(temperature=0.0, max_new_tokens=3))):
            run(client, [SYSTEM, first], options)
            ask = ChatMessage(Role.USER, "Name three colours of the rainbow.")
            _, reused = run(client, [SYSTEM, ask], greedy)
            shared = client.last_stats["reused_prompt_tokens"]
            assert shared >= client.count_tokens(SYSTEM.content)
            assert shared < client.count_tokens(SYSTEM.content) + 8  # the system message, not the question
            assert client.last_stats["prompt_tokens"] > shared
            fresh._kept = None
            _, new = run(fresh, [SYSTEM, ask], greedy)
            assert fresh.last_stats["reused_prompt_tokens"] == 0
            assert reused.text == new.text and reused.text
    finally:
        fresh.close()


def test_a_generation_its_caller_stops_reading_keeps_the_system_message_read(client, smollm2_dir):
    """A stream closed after its first update (the answerer stops reading a draft that went off
    course) leaves the generator whole: the next prompt is read from the end of the system message,
    and its answer is a new client's."""
    greedy = ChatOptions(temperature=0.0, max_new_tokens=24)
    stream = client.stream([SYSTEM, QUESTION], ChatOptions(temperature=0.0, max_new_tokens=60))
    assert next(u for u in stream if u.delta).delta
    stream.close()
    ask = ChatMessage(Role.USER, "Name three colours of the rainbow.")
    _, reused = run(client, [SYSTEM, ask], greedy)
    assert client.last_stats["reused_prompt_tokens"] >= client.count_tokens(SYSTEM.content)
    fresh = GenaiChatClient(smollm2_dir)
    try:
        _, new = run(fresh, [SYSTEM, ask], greedy)
        assert fresh.last_stats["reused_prompt_tokens"] == 0
        assert reused.text == new.text and reused.text
    finally:
        fresh.close()


def test_other_search_options_or_a_longer_call_start_a_new_generator(client):
    run(client, [SYSTEM, QUESTION], ChatOptions(temperature=0.0, max_new_tokens=8))
    run(client, [SYSTEM, QUESTION], ChatOptions(temperature=1.0, top_p=0.9, max_new_tokens=8))
    assert client.last_stats["reused_prompt_tokens"] == 0
    run(client, [SYSTEM, QUESTION], ChatOptions(temperature=0.0, max_new_tokens=8))
    assert client.last_stats["reused_prompt_tokens"] == 0  # back to greedy: a new one again
    run(client, [SYSTEM, QUESTION], ChatOptions(temperature=0.0, max_new_tokens=client.context_length))
    assert client.last_stats["reused_prompt_tokens"] == 0  # beyond what the kept one was made for


def test_the_probability_of_a_given_beginning_is_read_from_the_first_token(client):
    """With ChatOptions.decline_text the first update carries the probability that the answer began
    with that text's first token: highest for the greedy answer's own beginning."""
    updates, last = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=12))
    assert all(u.p_decline is None for u in updates)
    own, _ = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=12, decline_text=last.text))
    other, _ = run(client, [SYSTEM, QUESTION], ChatOptions(max_new_tokens=12, decline_text="Zebras graze."))
    p_own, p_other = own[0].p_decline, other[0].p_decline
    assert p_own is not None and p_other is not None
    assert 0.0 < p_other < p_own <= 1.0
    assert all(u.p_decline is None for u in own[1:])  # on the first update only
    assert "".join(u.delta for u in own) == last.text  # reading it changes nothing of the answer


def test_an_answer_that_avoids_a_beginning_begins_with_the_next_likeliest_token(client):
    """With ChatOptions.avoid_decline the answer never begins with decline_text's first token: where
    the greedy answer would, it begins with a less likely token and goes on from there, and p_decline
    still says how likely the avoided beginning was; any other decline_text changes nothing."""
    greedy = ChatOptions(temperature=0.0, max_new_tokens=12)
    plain, last = run(client, [SYSTEM, QUESTION], greedy)
    avoid = ChatOptions(temperature=0.0, max_new_tokens=12, decline_text=last.text, avoid_decline=True)
    avoided, other_last = run(client, [SYSTEM, QUESTION], avoid)
    assert avoided[0].p_decline == pytest.approx(plain[0].token_p[0])
    assert avoided[0].delta != plain[0].delta and other_last.text != last.text
    assert 0.0 < avoided[0].token_p[0] < plain[0].token_p[0]
    assert len(other_last.text.split()) > 1  # it goes on writing after the beginning it was given
    unrelated = ChatOptions(temperature=0.0, max_new_tokens=12, decline_text="Zebras graze.", avoid_decline=True)
    assert run(client, [SYSTEM, QUESTION], unrelated)[1].text == last.text


def test_each_delta_carries_the_probability_of_each_token_it_decodes(client):
    """One probability per generated token, each in (0, 1]; the first is the one the first token's
    probability of a given beginning reads, when that beginning is the answer's own."""
    updates, last = run(client, [SYSTEM, QUESTION], ChatOptions(temperature=0.0, max_new_tokens=24))
    probabilities = [p for u in updates for p in u.token_p]
    assert len(probabilities) in (client.last_stats["new_tokens"], client.last_stats["new_tokens"] - 1)  # EOS
    assert all(0.0 < p <= 1.0 for p in probabilities) and len(set(probabilities)) > 1
    assert all(u.token_p for u in updates if u.delta) and not last.token_p
    own, _ = run(client, [SYSTEM, QUESTION], ChatOptions(temperature=0.0, max_new_tokens=24, decline_text=last.text))
    assert own[0].p_decline == pytest.approx(probabilities[0])
    assert [p for u in own for p in u.token_p] == pytest.approx(probabilities)  # the same answer, read alike


def test_p_yes_between_two_tokens_leaves_the_stream_as_it_was(client, smollm2_dir):
    """The answer pass asks the model a yes/no question between two tokens of its own stream: the
    answer is a probability, the second question's differs from the first's, and the stream goes
    on as if it had not been asked."""
    greedy = ChatOptions(temperature=0.0, max_new_tokens=24)
    ask = ChatMessage(Role.USER, "Name three colours of the rainbow.")
    _, plain = run(client, [SYSTEM, ask], greedy)
    supported = [ChatMessage(Role.SYSTEM, "Answer Yes or No."),
                 ChatMessage(Role.USER, "Document: Paris is the capital of France.\nClaim: Paris is the capital of France.")]
    other = [supported[0], ChatMessage(Role.USER, "Document: Paris is the capital of France.\nClaim: The moon is a cheese.")]
    text = ""
    answers = []
    for u in client.stream([SYSTEM, ask], greedy):
        if u.delta and not answers:
            answers = [client.p_yes(supported), client.p_yes(other)]
        text += u.delta
    assert all(0.0 < p < 1.0 for p in answers) and answers[0] != answers[1]
    assert text == plain.text and text


def test_p_yes_reads_a_shared_beginning_once_and_answers_as_a_new_client(client, smollm2_dir):
    """Asked of one document again with another claim, the document is not read again, and the
    answer is a new client's to the digit (both read the prompt in the same two steps)."""
    system = ChatMessage(Role.SYSTEM, "Answer Yes or No.")
    document = "Document: Paris is the capital of France. The Seine flows through it.\nClaim:"
    first = [system, ChatMessage(Role.USER, f"{document} Paris is the capital of France.")]
    second = [system, ChatMessage(Role.USER, f"{document} The moon is made of cheese.")]
    client.p_yes(first, kept=document)
    assert client.last_check_stats["reused_prompt_tokens"] == 0
    again = client.p_yes(second, kept=document)
    reused = client.last_check_stats["reused_prompt_tokens"]
    assert reused >= client.count_tokens(document) - 2 and reused < client.last_check_stats["prompt_tokens"]
    fresh = GenaiChatClient(smollm2_dir)
    try:
        assert fresh.p_yes(second, kept=document) == again
        assert fresh.last_check_stats["reused_prompt_tokens"] == 0
    finally:
        fresh.close()
    client.p_yes(second)  # without a beginning to keep: read whole, nothing kept
    assert client.last_check_stats["reused_prompt_tokens"] == 0 and client._kept_check is None
