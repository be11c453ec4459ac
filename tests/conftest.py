"""Shared fixtures. No test writes into the real home: every test session gets its own
EDGECHAT_HOME; only the model cache (built once per machine by scripts/setup.sh) is shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Resolve the machine's model cache before redirecting EDGECHAT_HOME.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from edgechat.core import paths

os.environ.setdefault("EDGECHAT_MODELS", str(paths.models_dir()))

# Property tests check behaviour, not speed: Hypothesis' default 200 ms per example failed them
# on a loaded 2-core machine (timings belong in benchmarks).
from hypothesis import settings as _hypothesis_settings

from tests import llama_server as _llama  # resolves the machine's cache before EDGECHAT_HOME moves

_hypothesis_settings.register_profile("edgechat", deadline=None)
_hypothesis_settings.load_profile("edgechat")


@pytest.fixture(autouse=True, scope="session")
def _private_home(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("edgechat-home")
    old = {k: os.environ.get(k) for k in ("EDGECHAT_HOME", "EDGECHAT_LIBRARY")}
    os.environ["EDGECHAT_HOME"] = str(home)
    os.environ.pop("EDGECHAT_LIBRARY", None)
    yield home
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 ONNX embedder (built by scripts/setup.sh, cached per machine)."""
    from edgechat.core.embedding import load_default_embedder

    return load_default_embedder()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return tmp_path / "library"


# The real default language model (SmolLM2-135M-Instruct), built once per machine into the
# models dir ($EDGECHAT_MODELS) by scripts/setup.sh and reused from there.
@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    from edgechat.core.llm import build_smollm2 as b

    target = b.model_dir(b.DEFAULT_PRECISION)
    if b.is_built(target):
        return target
    try:
        result = b.ensure_smollm2(b.DEFAULT_PRECISION, print)
    except b.BuildError as exc:
        pytest.fail(
            f"The default language model is not in {target} and building it failed: {exc}\n"
            "Build it with: python -m edgechat.core.llm.install_smollm2",
            pytrace=False,
        )
    return result.path


@pytest.fixture(scope="session")
def client(smollm2_dir: Path):
    from edgechat.core.llm.genai_client import GenaiChatClient

    return GenaiChatClient(smollm2_dir)


# A real OpenAI-compatible model server (llama-cpp-python serving Qwen2.5-Coder-0.5B's GGUF) on a
# free loopback port, for the whole session; stopped at its end. scripts/llama_server.sh installs
# it (scripts/test.sh runs that); without it the tests that need it fail and say how to install it.
@pytest.fixture(scope="session")
def llama_server():
    try:
        server = _llama.LlamaServer().start()
    except _llama.ServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


# A real Chroma server (`chroma run`, installed with chromadb) on a free loopback port, for the
# whole session; stopped at its end. Each test uses a team library of its own name on it.
@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory):
    from tests.chroma_server import ChromaServer

    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "db").start()
    yield server
    server.stop()
