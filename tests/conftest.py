"""Shared fixtures. No test writes into the real home: every test session gets its own
EDGECHAT_HOME; only the model cache (built once per machine by scripts/setup.sh) is shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Resolve the machine's model cache before redirecting EDGECHAT_HOME.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from edgechat.core import paths  # noqa: E402

os.environ.setdefault("EDGECHAT_MODELS", str(paths.models_dir()))


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
    from edgechat.core.embedder import load_default_embedder

    return load_default_embedder()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return tmp_path / "library"

