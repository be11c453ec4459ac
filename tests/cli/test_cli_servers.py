"""`edgechat models add-server / list / test / use / remove` against a real llama.cpp server
(tests/llama_server.py), in a temporary models folder."""

from __future__ import annotations

import pytest

from edgechat.cli import main
from tests.llama_server import free_port


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    return tmp_path / "models"


def test_a_server_is_added_tested_chosen_and_removed(capsys, models, llama_server):
    assert main(["models", "add-server", "office", llama_server.url]) == 1
    err = capsys.readouterr().err
    assert err == f"edgechat: choose the model with --model; the server serves: {llama_server.model}\n"

    assert main(["models", "add-server", "office", llama_server.url, "--model", llama_server.model]) == 0
    out = capsys.readouterr().out
    assert out == (f"Added office ({llama_server.model} on this computer, a model server); answer with it: "
                   "edgechat models use office\n")
    assert main(["models", "test", "office"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "The server at 127.0.0.1 answers and serves 1 model(s)."
    assert lines[-1].startswith("It writes: first word in")

    assert main(["models", "use", "office"]) == 0
    assert capsys.readouterr().out.startswith("Answering with office\n")
    assert main(["models", "list"]) == 0
    listed = capsys.readouterr().out
    assert "* office" in listed and f"{llama_server.model} at {llama_server.url}" in listed

    assert main(["models", "remove", "office"]) == 0
    capsys.readouterr()
    assert main(["models", "list"]) == 0
    assert "office" not in capsys.readouterr().out


def test_a_server_that_is_down_fails_its_test_in_one_line(capsys, models):
    url = f"http://127.0.0.1:{free_port()}/v1"
    assert main(["models", "add-server", "gone", url, "--model", "m"]) == 0
    capsys.readouterr()
    assert main(["models", "test", "gone"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("The model server at 127.0.0.1 is not answering (connection refused)")
    assert out.count("\n") == 1
    assert main(["models", "use", "gone"]) == 0
    assert main(["models", "use", "nothing-called-this"]) == 1
    assert "no model named 'nothing-called-this' is installed" in capsys.readouterr().err


def test_a_server_checks_each_sentence_once_chosen(capsys, models, llama_server, tmp_path, embedder):
    """`models check-with NAME --general` makes the engine's answer check ask that server about
    each sentence its principles let through; `--off` returns to the principles alone."""
    from edgechat.core.engine import Engine
    from edgechat.core.llm.server_client import ServerChatClient
    from edgechat.core.records import RagRequest
    from tests.helpers import make_corpus

    assert main(["models", "check-with", "judge"]) == 1
    assert "no model server named 'judge'" in capsys.readouterr().err
    assert main(["models", "add-server", "judge", llama_server.url, "--model", llama_server.model]) == 0
    assert main(["models", "check-with", "judge", "--general"]) == 0
    assert capsys.readouterr().out.endswith(f"Each sentence of an answer is checked by {llama_server.model}.\n")
    assert main(["models", "list"]) == 0
    assert f"Answers are checked by judge ({llama_server.model})" in capsys.readouterr().out

    docs = make_corpus(tmp_path / "docs")
    writer = ServerChatClient(llama_server.url, llama_server.model)
    with Engine(tmp_path / "library", embedder=embedder, chat_client=writer) as engine:
        engine.index([docs])
        checker = engine.support_checker
        assert checker is not None and checker.name.startswith(f"{llama_server.model}@127.0.0.1")
        asked: list[str] = []
        check = checker.check
        checker.check = lambda document, claim: asked.append(claim) or check(document, claim)  # type: ignore[method-assign]
        updates = list(engine.ask(RagRequest("How hot is the surface of Venus?")))
        response = updates[-1].response
        verdicts = response.verdicts + response.draft_verdicts
        assert verdicts and asked, "the server was asked about the draft's sentences"
        for v in verdicts:  # what it found unsupported says so
            if v.reason.startswith("the support checker"):
                assert checker.name in v.reason
    assert main(["models", "check-with", "--off"]) == 0
    assert capsys.readouterr().out == "Answers are checked on this computer alone.\n"
    with Engine(tmp_path / "library", embedder=embedder) as engine:
        assert engine.support_checker is None
