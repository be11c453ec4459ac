#!/usr/bin/env bash
# Set up (first time only: virtualenv and models, cached), lint with ruff (the whole tree),
# type-check the Qt-free layers (edgechat/core and edgechat/service; both configured in
# pyproject.toml), then run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_FOR=tests scripts/setup.sh  # the tests need SmolLM2, not the default model
# llama.cpp's OpenAI-compatible server, for the model-server tests (.venv-server; the wheel is
# built once per machine, about 20 minutes, and cached in ~/.cache/edgechat-llama).
scripts/llama_server.sh >/dev/null
.venv/bin/python -m ruff check --no-cache .
.venv/bin/python -m mypy
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
exec .venv/bin/python -m pytest "$@"
