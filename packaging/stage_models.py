"""Stage the models the bundle carries: all-MiniLM-L6-v2, int8, with its tokenizer and licence.

    python packaging/stage_models.py STAGE_DIR      (run by packaging/build.sh)

Takes the model `edgechat models fetch --embedder-only` builds in the user data directory
(honours $EDGECHAT_MODELS / $EDGECHAT_HOME), building it there first if this machine lacks it, and
copies only what the app loads (model.int8.onnx, tokenizer.json, vocab.txt, config.json) plus
LICENSE and NOTICE to STAGE_DIR/models/embedders/all-MiniLM-L6-v2, with a manifest that lists just
those files (so `minilm.is_built` accepts the folder) and names int8 as the only variant. The
fp32 ONNX and the safetensors weights (180 MB) stay out of the bundle.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from edgechat.core.embedding.modelbuild import minilm

SHIPPED = ("model.int8.onnx", "tokenizer.json", "vocab.txt", "config.json", "LICENSE", "NOTICE")


def stage(stage_dir: Path) -> Path:
    src = minilm.ensure_minilm(lambda msg: print(f"  {msg}", flush=True), check_hashes=True)
    manifest = minilm.read_manifest(src)
    assert manifest is not None
    dest = stage_dir / "models" / "embedders" / minilm.MODEL_NAME
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in SHIPPED:
        shutil.copy2(src / name, dest / name)
    manifest["files"] = {name: manifest["files"][name] for name in SHIPPED}
    manifest["variants"] = {"int8": minilm.INT8_FILE}
    manifest["batch_independent"] = {"int8": manifest["batch_independent"]["int8"]}
    manifest["bundled"] = True
    (dest / minilm.MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    if not minilm.is_built(dest, check_hashes=True):
        raise SystemExit(f"the staged model in {dest} does not check out")
    size = sum(f.stat().st_size for f in dest.iterdir())
    print(f"  staged {minilm.MODEL_NAME} ({size / 1e6:.1f} MB) from {src}")
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    stage(Path(sys.argv[1]))
