"""The search gate, the deterministic and model rewriters, the capability rule, and the whole
turn through an Engine on a tiny corpus."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, RagRequest, Role, StopReason
from edgechat.core.understanding import (
    ConversationInterpreter,
    DeterministicRewriter,
    ModelRewriter,
    SearchGate,
    is_capable,
    list_items,
    model_parameters,
    parse_rewrite,
)

DATA = Path(__file__).parent / "data"
SCIFACT_QUERIES = Path(__file__).resolve().parents[3] / "shared" / "data" / "eval" / "scifact-dev" / "queries.jsonl"


def history(*pairs: tuple[str, str]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for q, a in pairs:
        out += [ChatMessage(Role.USER, q), ChatMessage(Role.ASSISTANT, a)]
    return out


def has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.I) is not None


def load_jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- gate


def test_small_talk_set_is_skipped_and_near_misses_are_searched():
    gate = SearchGate()
    rows = load_jsonl("smalltalk.jsonl")
    skips = [r for r in rows if r["skip"]]
    assert len(skips) >= 40
    wrong = [(r["text"], gate.check(r["text"])) for r in rows if (gate.check(r["text"]) is not None) != r["skip"]]
    assert wrong == []


def test_gate_reason_tells_small_talk_from_questions_about_the_conversation():
    gate = SearchGate()
    assert gate.check("Thanks a lot!") == "greeting or small talk"
    assert gate.check("Summarise what you just said") == "about the conversation itself"
    assert gate.check("Hi! What does unset logscale do?") is None


@pytest.mark.skipif(not SCIFACT_QUERIES.exists(), reason="needs ../shared/data/eval/scifact-dev")
def test_gate_never_skips_a_scifact_query():
    gate = SearchGate()
    queries = [json.loads(line)["text"] for line in SCIFACT_QUERIES.read_text().splitlines() if line.strip()]
    assert len(queries) == 809
    assert [q for q in queries if gate.check(q)] == []


# --------------------------------------------------------------------------- deterministic rewriter


def test_no_rewrite_on_the_first_turn_but_filler_leaves_the_keywords():
    rw = DeterministicRewriter().rewrite("Hi! Could you please tell me how gnuplot draws contour lines?", [])
    assert rw.method == "none" and not rw.followup
    assert rw.query == "Hi! Could you please tell me how gnuplot draws contour lines?"
    assert rw.keywords == ["gnuplot", "draws", "contour", "lines"]


def test_pronoun_follow_up_gets_the_subject_in_place_of_the_pronoun():
    rw = DeterministicRewriter().rewrite(
        "How do I turn it off?", history(("What does the logscale setting of gnuplot do?", "It makes an axis logarithmic [1]."))
    )
    assert rw.followup
    assert rw.query.startswith("How do I turn ") and " it " not in rw.query
    assert {"logscale", "gnuplot"} <= set(rw.keywords)


def test_elliptical_follow_up_keeps_its_own_words_and_gains_the_subject():
    rw = DeterministicRewriter().rewrite("And on Windows?", history(("How do I install an R package from source?", "R CMD INSTALL [1].")))
    assert rw.followup
    assert "windows" in rw.keywords and {"install", "package", "source", "r"} <= set(rw.keywords)
    assert "and" not in rw.query.lower().split()


def test_standalone_second_question_is_left_alone():
    rw = DeterministicRewriter().rewrite(
        "What is the Debian social contract?", history(("How do I install an R package from source?", "R CMD INSTALL [1]."))
    )
    assert not rw.followup
    assert rw.query == "What is the Debian social contract?"
    assert "install" not in rw.keywords


def test_ordinal_follow_up_is_read_from_the_last_answers_list():
    convo = history(("What are the Debian archive areas?", "There are three: main, contrib and non-free [1]."))
    rw = DeterministicRewriter().rewrite("What is the second one used for?", convo)
    assert "contrib" in rw.query and "second one" not in rw.query
    assert list_items("1. DESCRIPTION: metadata\n2. NAMESPACE: exports\n3. R/: code") == ["DESCRIPTION", "NAMESPACE", "R/"]


def test_three_turn_chain_keeps_the_first_turns_subject():
    convo = history(
        ("How do I fit a linear regression model in R?", "Use lm() [1]."),
        ("How do I see a summary of the fitted model?", "summary(fm) [1]."),
    )
    rw = DeterministicRewriter().rewrite("And how do I extract its residuals?", convo)
    assert {"linear", "regression", "residuals"} <= set(rw.keywords)


def test_small_talk_turns_in_the_history_carry_no_subject():
    convo = history(("How do I draw a circle in Asymptote?", "draw(unitcircle) [1]."), ("thanks!", "You're welcome."))
    rw = DeterministicRewriter().rewrite("How do I fill it?", convo)
    assert {"circle", "asymptote"} <= set(rw.keywords)
    assert "thanks" not in rw.keywords


def test_current_question_repeated_at_the_end_of_recent_is_not_its_own_history():
    rw = DeterministicRewriter().rewrite("How do I fill it?", [ChatMessage(Role.USER, "How do I fill it?")])
    assert rw.method == "none"


def test_follow_up_set_regression_every_conversation_gets_its_subject_terms():
    rows = load_jsonl("followups.jsonl")
    assert len(rows) >= 30 and any(len(r["turns"]) == 3 for r in rows)
    rewriter = DeterministicRewriter()
    missing = {}
    for r in rows:
        convo = history(*[(t["user"], t["assistant"]) for t in r["turns"][:-1]])
        rw = rewriter.rewrite(r["turns"][-1]["user"], convo)
        lost = [n for n in r["needs"] if not has_word(rw.query, n)]
        if lost:
            missing[r["id"]] = (rw.query, lost)
        # the last turn alone lacks them: otherwise the conversation tests nothing
        assert not all(has_word(r["turns"][-1]["user"], n) for n in r["needs"]), r["id"]
    assert missing == {}


# --------------------------------------------------------------------------- model rewriter


class FakeClient:
    """A ChatClient that replies with fixed text, token by token, optionally slowly or failing."""

    context_length = 2048
    kind = ClientKind.MODEL

    def __init__(self, reply: str = "", *, name: str = "phi-3.5-mini-instruct", delay: float = 0.0, error: Exception | None = None):
        self.reply = reply
        self.name = name
        self.delay = delay
        self.error = error
        self.calls: list[list[ChatMessage]] = []
        self.cancelled = threading.Event()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages, options: ChatOptions, cancel=None):
        self.calls.append(list(messages))
        if self.error:
            raise self.error
        text = ""
        for piece in self.reply.split(" "):
            if cancel is not None and cancel.is_set():
                self.cancelled.set()
                yield ChatUpdate(done=True, text=text, stop_reason=StopReason.CANCELLED)
                return
            time.sleep(self.delay)
            delta = piece + " "
            text += delta
            yield ChatUpdate(delta=delta, text=text)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)


CONVO = history(("How do I draw a circle in Asymptote?", "draw(unitcircle) [1]."))


def test_model_rewrite_is_parsed_and_used():
    client = FakeClient("QUERY: How do I fill a circle in Asymptote?\nKEYWORDS: fill, circle, asymptote, filldraw\n")
    rw = ModelRewriter(client, timeout=5).rewrite("How do I fill it?", CONVO)
    assert rw.method == "model" and rw.fallback is None
    assert rw.query == "How do I fill a circle in Asymptote?"
    assert rw.keywords[:4] == ["fill", "circle", "asymptote", "filldraw"]
    assert rw.raw.startswith("QUERY:")
    prompt = "\n".join(m.content for m in client.calls[0])
    assert "draw(unitcircle)" in prompt and "Last user message: How do I fill it?" in prompt


@pytest.mark.parametrize(
    "client, reason",
    [
        (FakeClient("Sure! Circles are round."), "unparseable output"),
        (FakeClient("QUERY: What is the capital of France?\nKEYWORDS: capital, france"), "shares no word"),
        (FakeClient(error=RuntimeError("model crashed")), "error: RuntimeError"),
    ],
)
def test_model_rewrite_falls_back_to_the_deterministic_one(client, reason):
    rw = ModelRewriter(client, timeout=5).rewrite("How do I fill it?", CONVO)
    assert rw.method == "deterministic"
    assert reason in rw.fallback
    assert {"circle", "asymptote"} <= set(rw.keywords)


def test_model_rewrite_is_bounded_in_time():
    """The reply would take 0.5 s a word; the rewriter gives up at its time limit (how long that
    takes on a machine is a benchmark's business, not a test's)."""
    slow = FakeClient("QUERY: fill a circle in Asymptote\nKEYWORDS: fill, circle", delay=0.5)
    rw = ModelRewriter(slow, timeout=0.3).rewrite("How do I fill it?", CONVO)
    assert rw.method == "deterministic" and rw.fallback.startswith("timeout")
    assert slow.cancelled.wait(2.0)  # the generation was told to stop


def test_model_is_not_asked_on_the_first_turn():
    client = FakeClient("QUERY: x\nKEYWORDS: y")
    rw = ModelRewriter(client).rewrite("How do I draw a circle in Asymptote?", [])
    assert rw.method == "none" and client.calls == []


def test_parse_rewrite_accepts_json_and_markdown():
    assert parse_rewrite('{"query": "fill circle", "keywords": ["fill", "circle"]}') == ("fill circle", ["fill", "circle"])
    assert parse_rewrite("**Query:** fill circle\n**Keywords:** fill; circle") == ("fill circle", ["fill", "circle"])
    assert parse_rewrite("no structure at all") is None


# --------------------------------------------------------------------------- capability


def test_capability_rule(tmp_path):
    assert model_parameters("smollm2-135m-instruct-int4") == 135e6
    assert not is_capable(FakeClient(name="smollm2-135m-instruct-int8"))
    assert not is_capable(FakeClient(name="qwen2.5-1.5b-instruct"))  # measured: the deterministic rewriter does better
    assert is_capable(FakeClient(name="phi-3.5-mini-instruct-cpu-int4"))
    assert not is_capable(FakeClient(name="extractive"))
    assert not is_capable(None)
    # a name that says nothing: the folder's size decides (2 GB of int4 weights ~ 3.3B parameters)
    big = tmp_path / "mystery-int4"
    big.mkdir()
    with open(big / "model.onnx.data", "wb") as fh:
        fh.truncate(2 * 10**9)
    small = tmp_path / "tiny-int4"
    small.mkdir()
    (small / "model.onnx").write_bytes(b"\0" * 1000)
    c_big, c_small = FakeClient(name="mystery-int4"), FakeClient(name="tiny-int4")
    c_big.model_dir, c_small.model_dir = big, small
    assert is_capable(c_big) and not is_capable(c_small)


def test_interpreter_uses_the_model_only_when_capable():
    reply = "QUERY: How do I fill a circle in Asymptote?\nKEYWORDS: fill, circle"
    capable, small = FakeClient(reply), FakeClient(reply, name="smollm2-135m-instruct-int8")
    u = ConversationInterpreter(capable).interpret("How do I fill it?", CONVO)
    assert u.search and u.query == "How do I fill a circle in Asymptote?" and u.details["rewriter"] == "model"
    u = ConversationInterpreter(small).interpret("How do I fill it?", CONVO)
    assert u.details["rewriter"] == "deterministic" and small.calls == []
    u = ConversationInterpreter(small, use_model=True).interpret("How do I fill it?", CONVO)
    assert u.details["rewriter"] == "model"


def test_interpreter_skips_small_talk_without_rewriting():
    client = FakeClient("QUERY: x\nKEYWORDS: y")
    u = ConversationInterpreter(client).interpret("thanks, that was helpful!", CONVO)
    assert not u.search and u.reason == "greeting or small talk" and client.calls == []
    u = ConversationInterpreter().interpret("What is the capital of France?", [])
    assert u.search and u.query is None and u.keywords == ["capital", "france"]


# --------------------------------------------------------------------------- end to end


class CountingEmbedder:
    def __init__(self, inner):
        self.inner = inner
        self.name, self.dim, self.max_tokens, self.tokenizer = inner.name, inner.dim, inner.max_tokens, inner.tokenizer
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(texts)

    def embed_query(self, text):
        return self.embed([text])[0]


def test_engine_resolves_a_follow_up_and_skips_small_talk(tmp_path, embedder):
    from edgechat.core.answering.extractive import ExtractiveClient
    from edgechat.core.engine import Engine
    from tests.helpers import make_corpus, write

    corpus = make_corpus(tmp_path / "docs")
    write(corpus / "plotting.md", "# Gnuplot notes\n\nThe command set logscale y makes the y axis of a gnuplot graph "
          "logarithmic. The command unset logscale switches log scaling back to linear axes.\n")
    write(corpus / "printer.txt", "To turn the office printer off, hold its power button for three seconds until "
          "the light goes out. Always turn it off before you clean it.\n")
    counting = CountingEmbedder(embedder)
    with Engine(tmp_path / "lib", embedder=counting, chat_client=ExtractiveClient()) as engine:
        engine.index([corpus])
        convo = history(("How do I make the y axis logarithmic in gnuplot?", "Use set logscale y [1]."))

        # on its own the question is about something else entirely
        alone = engine.process(RagRequest("How do I turn it off?"))
        assert alone.rewritten_query is None
        assert alone.references[0].path.endswith("printer.txt")

        pq = engine.process(RagRequest("How do I turn it off?", recent_messages=convo))
        assert pq.rewritten_query and "gnuplot" in pq.rewritten_query and " it " not in pq.rewritten_query
        assert {"logarithmic", "gnuplot", "logscale"} <= set(pq.keywords)
        assert json.loads(pq.rewrite_raw)["followup"] is True
        assert pq.references[0].path.endswith("plotting.md")
        assert pq.diagnostics["understand"]["rewriter"] == "deterministic"

        counting.texts.clear()
        updates = list(engine.ask(RagRequest("Thanks, that's great!", recent_messages=convo)))
        last = updates[-1].response
        assert last.processed.search_skipped and last.processed.diagnostics["skip_reason"] == "greeting or small talk"
        assert last.sources == [] and not last.grounded
        assert counting.texts == []  # nothing was embedded, nothing searched
        assert last.processed.raw_candidates == []
