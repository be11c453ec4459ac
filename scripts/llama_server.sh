#!/usr/bin/env bash
# llama.cpp's OpenAI-compatible server (llama-cpp-python[server]), for the tests and benchmarks
# that need a real model server. It is not part of the app or its bundle.
#
#   scripts/llama_server.sh          the virtualenv .venv-server with the server in it (from the
#                                    cached wheel; built once per machine when there is none)
#   scripts/llama_server.sh --wheel  only build (or find) the cached wheel; print its path
#
# llama-cpp-python is a source archive on PyPI: building it compiles llama.cpp with this machine's
# gcc, g++ and cmake, about 20 minutes on 2 cores. It is built once, at the lowest CPU priority
# and one compile job at a time (CMAKE_BUILD_PARALLEL_LEVEL, default 1), and the wheel is kept in
# ~/.cache/edgechat-llama (EDGECHAT_LLAMA_CACHE), the way packaging/build.sh keeps its virtualenv.
# The wheel is built for this machine's CPU (llama.cpp's GGML_NATIVE), so the cache is per
# machine.
#
# Environment:
#   PYTHON                     the interpreter for .venv-server (default: python3)
#   EDGECHAT_LLAMA_CACHE       where the wheel is kept (default: ~/.cache/edgechat-llama)
#   CMAKE_BUILD_PARALLEL_LEVEL compile jobs while building (default: 1)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
VERSION=0.3.36
CACHE=${EDGECHAT_LLAMA_CACHE:-$HOME/.cache/edgechat-llama}
WHEELS=$CACHE/wheels
VENV=$ROOT/.venv-server
mkdir -p "$WHEELS"

find_wheel() {
  ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -1
}

WHEEL=$(find_wheel || true)
if [ -z "$WHEEL" ]; then
  echo "Building llama-cpp-python $VERSION once (about 20 minutes, at low priority) into $WHEELS ..." >&2
  t0=$(date +%s)
  BUILD=$(mktemp -d)
  trap 'rm -rf "$BUILD"' EXIT
  "$PY" -m venv "$BUILD/venv"
  "$BUILD/venv/bin/python" -m pip install -q --upgrade pip
  # Built into a temporary folder and moved into the cache whole, so an interrupted build leaves
  # no wheel behind.
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1} nice -n 19 \
    "$BUILD/venv/bin/python" -m pip wheel -q --no-deps --no-binary llama-cpp-python \
    "llama-cpp-python==$VERSION" -w "$BUILD/out"
  mv "$BUILD"/out/llama_cpp_python-"$VERSION"-*.whl "$WHEELS"/
  WHEEL=$(find_wheel)
  echo "Built $WHEEL in $(( $(date +%s) - t0 )) s" >&2
fi
if [ "${1:-}" = "--wheel" ]; then
  echo "$WHEEL"
  exit 0
fi

# The server's own virtualenv: its dependencies (fastapi, uvicorn, pydantic-settings, ...) stay
# out of the app's .venv. Reinstalled when the wheel changes.
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.edgechat-wheel" 2>/dev/null)" != "$(basename "$WHEEL")" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "$WHEEL[server]"
  basename "$WHEEL" > "$VENV/.edgechat-wheel"
fi
echo "$VENV/bin/python"
