"""Fixtures for the language-model tests: the real default model (SmolLM2-135M-Instruct),
built once per machine into the models dir ($EDGECHAT_MODELS) and reused from there."""

from __future__ import annotations

from pathlib import Path

import pytest


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
            "Build it with: python -m edgechat.core.llm.build_smollm2",
            pytrace=False,
        )
    return result.path


@pytest.fixture(scope="session")
def client(smollm2_dir: Path):
    from edgechat.core.llm.genai_client import GenaiChatClient

    return GenaiChatClient(smollm2_dir)
