#!/usr/bin/env bash
# Set up EdgeChat on a fresh machine: a virtualenv in .venv with the app and its test tools,
# then the models (built once per machine and cached under the user data directory).
#   scripts/setup.sh           app + tests + models
#   SKIP_MODELS=1 scripts/setup.sh   app + tests only
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'

if [ "${SKIP_MODELS:-0}" != "1" ]; then
  # The embedding model: converted to ONNX with numpy + onnx, no torch.
  .venv/bin/edgechat models fetch --embedder-only
  # The default language model: converting it needs torch, transformers and gguf once, so that
  # happens in a separate virtualenv (.venv-convert) and the app's own never holds torch.
  if ! .venv/bin/python -c 'from edgechat.core.llm import manager; raise SystemExit(0 if manager.list_models() else 1)'; then
    if [ ! -x .venv-convert/bin/python ]; then
      "$PY" -m venv .venv-convert
    fi
    .venv-convert/bin/python -m pip install -q --upgrade pip
    # torch==2.13.0 (CPU) installs from this machine's local wheel; see pyproject's "convert" extra.
    .venv-convert/bin/python -m pip install -q -e '.[convert]'
    .venv-convert/bin/python -m edgechat.core.llm.install_smollm2
  fi
fi
