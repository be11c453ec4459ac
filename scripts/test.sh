#!/usr/bin/env bash
# Set up (first time only: virtualenv and models, cached) and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
exec .venv/bin/python -m pytest "$@"
