#!/usr/bin/env bash
# Set up (first time only) and run EdgeChat.
#   scripts/run.sh                 open the desktop app (with no screen: index the sample
#                                  documents and answer a question from the command line)
#   scripts/run.sh ARGS...         run the command line, e.g. scripts/run.sh ask "..."
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ $# -gt 0 ]; then
  exec .venv/bin/edgechat "$@"
fi
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || [ "$(uname)" = "Darwin" ]; then
  exec .venv/bin/edgechat
fi
echo "No screen found: running EdgeChat's main job from the command line instead." >&2
.venv/bin/edgechat index resources/sample
exec .venv/bin/edgechat ask "How does EdgeChat keep my documents private?"
