"""The model-server client against a real OpenAI-compatible server: llama-cpp-python's (llama.cpp)
serving Qwen2.5-Coder-0.5B-Instruct, started on a free loopback port (tests/llama_server.py).

The failures a person meets are each made real: nothing listening, a server that wants a key, a
model it does not serve, a wait longer than the timeout, a server killed in the middle of an
answer. The one stand-in is the system keyring (no Secret Service runs on a headless machine):
FakeKeyring, a keyring backend in memory."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence

import pytest

from edgechat.core.engine import Engine, choose_chat_client, installed_models
from edgechat.core.llm.folders import ModelError
from edgechat.core.llm.manager import ModelManager
from edgechat.core.llm.server_client import ServerChatClient, ServerError
from edgechat.core.llm.servers import (
    ServerConfig,
    is_this_computer,
    normalize_url,
    privacy_note,
    servers_file,
    where,
)
from edgechat.core.records import ChatMessage, ChatOptions, ChatUpdate, ClientKind, RagRequest, Role, StopReason
from tests.helpers import make_corpus
from tests.llama_server import LlamaServer, free_port

HELLO = [ChatMessage(Role.USER, "Say hello.")]


def _run(client, messages=HELLO, options=ChatOptions(max_new_tokens=8), cancel=None) -> list[ChatUpdate]:
    return list(client.stream(messages, options, cancel))


@pytest.fixture
def client(llama_server):
    c = ServerChatClient(llama_server.url, llama_server.model)
    yield c
    c.close()


# ---------------------------------------------------------------------- addresses, no network


def test_addresses_are_normalized_to_the_api_base():
    assert normalize_url("localhost:11434") == "http://localhost:11434/v1"
    assert normalize_url("http://10.0.0.5:8000/v1/") == "http://10.0.0.5:8000/v1"
    assert normalize_url("https://gpu.example.org/v1/chat/completions") == "https://gpu.example.org/v1"
    with pytest.raises(ModelError):
        normalize_url("ftp://host/v1")


def test_only_loopback_counts_as_this_computer():
    assert is_this_computer("localhost") and is_this_computer("127.0.0.1") and is_this_computer("::1")
    assert not is_this_computer("192.168.1.20") and not is_this_computer("gpu-box")
    remote = ServerConfig("office", normalize_url("192.168.1.20:11434"), "qwen2.5:7b")
    assert where(remote) == "192.168.1.20"
    assert privacy_note(remote) == ("Answers are written on 192.168.1.20: the question and the passages are "
                                    "sent there.")
    assert where(ServerConfig("here", normalize_url("localhost:8080"), "m")) == ""


# ---------------------------------------------------------------------- streaming


def test_an_answer_streams_from_the_server(client, llama_server):
    updates = _run(client, options=ChatOptions(max_new_tokens=12))
    deltas = [u.delta for u in updates if u.delta]
    assert len(deltas) >= 2, "the answer came in one piece, not streamed"
    last = updates[-1]
    assert last.done and last.text == "".join(deltas) and last.text.strip()
    assert last.stop_reason in (StopReason.EOS, StopReason.MAX_TOKENS)
    assert client.last_stats["first_token_seconds"] > 0 and client.last_stats["new_tokens"] == len(deltas)
    assert [m.id for m in client.list_models()] == [llama_server.model]


def test_the_answer_length_is_the_servers_limit_too(client):
    updates = _run(client, [ChatMessage(Role.USER, "Count from one to fifty in words.")], ChatOptions(max_new_tokens=3))
    assert updates[-1].stop_reason == StopReason.MAX_TOKENS
    assert 1 <= client.last_stats["new_tokens"] <= 3


def test_stop_cancels_the_request_within_a_moment(client):
    cancel = threading.Event()
    stream = client.stream([ChatMessage(Role.USER, "Write a long story about a lighthouse keeper.")],
                           ChatOptions(max_new_tokens=400), cancel)
    first = next(stream)
    assert first.delta
    cancel.set()
    t0 = time.monotonic()
    rest = list(stream)
    assert time.monotonic() - t0 < 1.0
    assert rest[-1].done and rest[-1].stop_reason == StopReason.CANCELLED
    assert len(rest[-1].text) < 400 * 8  # it did not run on to the end
    # The server stopped that answer: the next one starts at once, not after 400 tokens.
    t1 = time.monotonic()
    assert _run(client, options=ChatOptions(max_new_tokens=2))[-1].text
    assert time.monotonic() - t1 < 20


def test_stop_while_the_server_reads_the_prompt(client):
    long_prompt = "Here are notes. " + " ".join(f"Note {i}: the valve {i} is checked weekly." for i in range(30))
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    t0 = time.monotonic()
    updates = _run(client, [ChatMessage(Role.USER, long_prompt + " Which valve is checked?")],
                   ChatOptions(max_new_tokens=50), cancel)
    assert time.monotonic() - t0 < 1.5, "Stop waited for the server to finish reading the prompt"
    assert updates[-1].stop_reason == StopReason.CANCELLED and not updates[-1].text


def test_a_prompt_longer_than_the_servers_context_says_so(client):
    # llama-cpp-python starts its event stream and then drops it: no status, no error event.
    too_long = " ".join(f"Note {i}: the valve {i} is checked weekly." for i in range(200))
    with pytest.raises(ServerError) as e:
        _run(client, [ChatMessage(Role.USER, too_long)])
    assert str(e.value) == ("The model server at 127.0.0.1 closed the answer before it was finished (before its "
                            "first word: a prompt longer than the context the server gives the model ends this way)")


def test_the_context_comes_from_the_setting_when_the_server_does_not_say(llama_server):
    # llama-cpp-python's /v1/models names its models without their context: the setting holds.
    c = ServerChatClient(llama_server.url, llama_server.model, context_length=1536)
    assert c.context_length == 1536
    assert c.count_tokens("a" * 35) == 10  # the estimate errs high: 3.5 characters a token


# ---------------------------------------------------------------------- failures: one clear line


def test_a_server_that_is_down_is_one_line():
    c = ServerChatClient(f"http://127.0.0.1:{free_port()}/v1", "any")
    with pytest.raises(ServerError) as e:
        _run(c)
    assert str(e.value).startswith("The model server at 127.0.0.1 is not answering (connection refused)")
    assert "\n" not in str(e.value)


def test_a_model_the_server_does_not_serve_is_named(llama_server):
    c = ServerChatClient(llama_server.url, "llama-70b")
    with pytest.raises(ServerError) as e:
        _run(c)
    assert str(e.value) == (f"The model server at 127.0.0.1 has no model 'llama-70b'; it serves: {llama_server.model}")


def test_a_key_the_server_wants_or_refuses(llama_server):
    with LlamaServer(llama_server.gguf, api_key="s3cret", n_ctx=512) as keyed:
        with pytest.raises(ServerError, match=r"^The model server at 127.0.0.1 needs an API key \(401"):
            _run(ServerChatClient(keyed.url, keyed.model))
        with pytest.raises(ServerError, match=r"^The model server at 127.0.0.1 refused the API key \(401"):
            _run(ServerChatClient(keyed.url, keyed.model, api_key="wrong"))
        assert _run(ServerChatClient(keyed.url, keyed.model, api_key="s3cret"))[-1].text


def test_no_answer_within_the_timeout_is_one_line(llama_server):
    long_prompt = " ".join(f"Item {i} weighs {i * 7} grams." for i in range(40)) + " What does item 3 weigh?"
    c = ServerChatClient(llama_server.url, llama_server.model, timeout=0.5)
    c.list_models()  # the model is checked first, within the timeout too
    with pytest.raises(ServerError) as e:
        _run(c, [ChatMessage(Role.USER, long_prompt)])
    assert str(e.value).startswith("The model server at 127.0.0.1 did not answer within 0.5 s;")


def test_a_server_that_dies_in_the_middle_of_an_answer(llama_server):
    with LlamaServer(llama_server.gguf, n_ctx=512) as doomed:
        c = ServerChatClient(doomed.url, doomed.model)
        stream = c.stream([ChatMessage(Role.USER, "Write a long story about a lighthouse keeper.")],
                          ChatOptions(max_new_tokens=300))
        assert next(stream).delta
        assert doomed.proc is not None
        doomed.proc.kill()
        with pytest.raises(ServerError, match=r"^The model server at 127.0.0.1 closed the answer before it was "
                                              r"finished"):
            list(stream)


# ---------------------------------------------------------------------- the same answer as a local model


class Recording:
    """The server client, unchanged, keeping the text of each call (to replay it below)."""

    def __init__(self, inner: ServerChatClient) -> None:
        self.inner = inner
        self.name, self.kind, self.texts = inner.name, inner.kind, []

    @property
    def context_length(self) -> int:
        return self.inner.context_length

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def stream(self, messages, options, cancel=None) -> Iterator[ChatUpdate]:
        for u in self.inner.stream(messages, options, cancel):
            if u.done:
                self.texts.append(u.text)
            yield u


class ScriptedLocalModel:
    """A fake local model (it cannot be made to write a given text): replays the recorded texts
    with the recorded client's budget, token by token as a local model streams."""

    kind = ClientKind.MODEL
    name = "local"

    def __init__(self, texts: Sequence[str], like: Recording) -> None:
        self.texts = list(texts)
        self.context_length = like.context_length
        self.count_tokens = like.count_tokens

    def stream(self, messages, options, cancel=None) -> Iterator[ChatUpdate]:
        text = ""
        for ch in self.texts.pop(0):
            text += ch
            yield ChatUpdate(delta=ch, text=text)
        yield ChatUpdate(done=True, text=text, stop_reason=StopReason.EOS)


def test_through_a_server_the_answer_shown_is_the_local_models_on_the_same_draft(tmp_path, embedder, llama_server):
    def shown(response) -> dict:
        return {"text": response.text, "draft": response.draft, "grounded": response.grounded,
                "abstained": response.abstained, "citations": [c.to_dict() for c in response.citations],
                "verdicts": [v.to_dict() for v in response.verdicts],
                "draft_verdicts": [v.to_dict() for v in response.draft_verdicts],
                "sources": [(s.ordinal, s.path, s.page) for s in response.sources]}

    with Engine(tmp_path / "lib", embedder=embedder) as engine:
        engine.index([make_corpus(tmp_path / "docs")])
        for question in ("How long is a year on Mercury?", "How long should bread dough rise?"):
            served = Recording(ServerChatClient(llama_server.url, llama_server.model))
            options = ChatOptions(max_new_tokens=60)
            by_server = list(engine.ask(RagRequest(question), options=options, client=served))[-1].response
            assert served.texts and served.texts[0].strip(), "the server wrote nothing"
            local = ScriptedLocalModel(served.texts, served)
            by_local = list(engine.ask(RagRequest(question), options=options, client=local))[-1].response
            assert json.dumps(shown(by_server), default=str) == json.dumps(shown(by_local), default=str)
            assert by_server.sources  # the question was answered from the documents


# ---------------------------------------------------------------------- configured servers


class FakeKeyring:
    """A stand-in for the system keyring (no Secret Service runs on a headless test machine)."""

    priority = 1

    def __init__(self) -> None:
        self.store: dict[tuple[str, str], str] = {}

    def set_password(self, service: str, user: str, password: str) -> None:
        self.store[service, user] = password

    def get_password(self, service: str, user: str) -> str | None:
        return self.store.get((service, user))

    def delete_password(self, service: str, user: str) -> None:
        del self.store[service, user]


@pytest.fixture
def fake_keyring(monkeypatch):
    import keyring

    fake = FakeKeyring()
    monkeypatch.setattr(keyring, "set_password", fake.set_password)
    monkeypatch.setattr(keyring, "get_password", fake.get_password)
    monkeypatch.setattr(keyring, "delete_password", fake.delete_password)
    return fake


def test_a_configured_server_is_chosen_like_a_model_and_its_key_stays_in_the_keyring(
        tmp_path, monkeypatch, fake_keyring, llama_server):
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    with LlamaServer(llama_server.gguf, api_key="k-123", n_ctx=512) as keyed:
        mm = ModelManager()
        mm.add_server(ServerConfig("office", keyed.url, keyed.model, context_length=512), api_key="k-123")
        assert "k-123" not in servers_file(mm.models_dir).read_text()
        assert fake_keyring.store == {("EdgeChat", "server:office"): "k-123"}
        names, active = installed_models()
        assert [n for n, _ in names] == ["office"] and active == ""
        choice = choose_chat_client("office")
        assert isinstance(choice.client, ServerChatClient) and choice.kind == ClientKind.MODEL
        assert choice.note == ""  # on this computer: nothing to warn of
        assert installed_models()[1] == "office"
        assert _run(choice.client)[-1].text  # the key from the keyring was sent
        mm.remove_model("office")
        assert mm.list_servers() == [] and fake_keyring.store == {} and mm.active_server() is None


def test_a_server_off_this_computer_carries_the_privacy_note(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    ModelManager().add_server(ServerConfig("office", "http://192.168.1.20:11434/v1", "qwen2.5:7b"))
    choice = choose_chat_client("office")  # no request is made until a question is asked
    assert choice.note == "Answers are written on 192.168.1.20: the question and the passages are sent there."
    assert installed_models()[0] == [("office", "office (qwen2.5:7b on 192.168.1.20, a model server)")]


def test_a_server_cannot_take_an_installed_models_name(tmp_path):
    mm = ModelManager(tmp_path / "models")
    (mm.llm_dir / "mine").mkdir(parents=True)
    (mm.llm_dir / "mine" / "genai_config.json").write_text("{}")
    with pytest.raises(ModelError, match="a model named 'mine' is installed"):
        mm.add_server(ServerConfig("mine", "localhost:1", "m"))


def test_the_test_button_says_what_works_and_what_does_not(llama_server):
    ok = ServerChatClient(llama_server.url, llama_server.model).check()
    assert ok.ok and ok.reachable and ok.model_found and ok.answered
    assert ok.lines[0] == "The server at 127.0.0.1 answers and serves 1 model(s)."
    assert ok.lines[-1].startswith("It writes: first word in")
    wrong = ServerChatClient(llama_server.url, "nope").check()
    assert wrong.reachable and not wrong.model_found and not wrong.ok
    assert wrong.lines[-1] == f"The model server at 127.0.0.1 has no model 'nope'; it serves: {llama_server.model}"
    down = ServerChatClient(f"http://127.0.0.1:{free_port()}", "m").check()
    assert not down.reachable and down.lines == (down.error,) and "not answering" in down.error


def test_a_server_given_in_the_setting_answers_once_without_being_kept(tmp_path, monkeypatch, llama_server):
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    choice = choose_chat_client(f"server:{llama_server.url}:{llama_server.model}")
    assert isinstance(choice.client, ServerChatClient) and choice.note == ""
    assert choice.client.name == f"{llama_server.model}@127.0.0.1:{llama_server.port}"
    assert _run(choice.client)[-1].text
    assert ModelManager().list_servers() == [] and ModelManager().active_server() is None
