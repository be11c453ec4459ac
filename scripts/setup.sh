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
  # Language models: converting them needs torch, transformers and gguf once, so that happens
  # in a separate virtualenv (.venv-convert) and the app's own never holds torch.
  #   SmolLM2-135M (small and fast): the test suite's model, built always.
  #   The default model (edgechat.core.llm.catalog.DEFAULT_MODEL, Qwen2.5-Coder-1.5B): what the
  #   app answers with; skipped by scripts/test.sh (SETUP_FOR=tests), which does not need it.
  installed() {
    .venv/bin/python - "$1" <<'PY'
import sys
from edgechat.core.llm import manager
sys.exit(0 if any(m.name.startswith(sys.argv[1]) for m in manager.list_models()) else 1)
PY
  }
  DEFAULT_MODEL=$(.venv/bin/python -c 'from edgechat.core.llm.catalog import DEFAULT_MODEL; print(DEFAULT_MODEL)')
  need_smollm2=0; need_default=0
  installed smollm2 || need_smollm2=1
  if [ "${SETUP_FOR:-app}" != "tests" ] && ! installed "$DEFAULT_MODEL"; then need_default=1; fi
  if [ "$need_smollm2$need_default" != "00" ]; then
    if [ ! -x .venv-convert/bin/python ]; then
      "$PY" -m venv .venv-convert
    fi
    .venv-convert/bin/python -m pip install -q --upgrade pip
    # torch==2.13.0 (CPU) installs from this machine's local wheel; see pyproject's "convert" extra.
    .venv-convert/bin/python -m pip install -q -e '.[convert]'
  fi
  if [ "$need_smollm2" = 1 ]; then
    .venv-convert/bin/python -m edgechat.core.llm.install_smollm2
  fi
  if [ "$need_default" = 1 ]; then
    echo "Building the default language model, $DEFAULT_MODEL (once; about 1.1 GB to download and 7 minutes)..." >&2
    .venv-convert/bin/edgechat models install "$DEFAULT_MODEL"
    .venv/bin/edgechat models use "$DEFAULT_MODEL"
  fi
fi
