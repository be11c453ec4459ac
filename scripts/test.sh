#!/usr/bin/env bash
# Set up (first time only: virtualenv and models, cached), type-check the Qt-free layers
# (edgechat/core and edgechat/service, settings in pyproject.toml), then run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_FOR=tests scripts/setup.sh  # the tests need SmolLM2, not the default model
.venv/bin/python -m mypy
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
exec .venv/bin/python -m pytest "$@"
