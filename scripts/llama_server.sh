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
# The wheel is built for any x86-64 CPU with AVX2, FMA and F16C, not for this machine's own
# (llama.cpp's GGML_NATIVE): a native build uses whatever the CPU reports, and a virtual
# machine's CPU can report instructions (AMX tiles) that then fault in the server process.
#
# Environment:
#   PYTHON                     the interpreter for .venv-server (default: python3)
#   EDGECHAT_LLAMA_CACHE       where the wheel is kept (default: ~/.cache/edgechat-llama)
#   CMAKE_BUILD_PARALLEL_LEVEL compile jobs while building (default: 1)
#   CMAKE_ARGS                 llama.cpp's build options (default: the portable set below)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
VERSION=0.3.36
CACHE=${EDGECHAT_LLAMA_CACHE:-$HOME/.cache/edgechat-llama}
WHEELS=$CACHE/wheels-portable
PORTABLE="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
PORTABLE="$PORTABLE -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
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
  # no wheel behind; without pip's cache, which would hand back a wheel built with other options.
  CMAKE_ARGS=${CMAKE_ARGS:-$PORTABLE} CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1} nice -n 19 \
    "$BUILD/venv/bin/python" -m pip wheel -q --no-cache-dir --no-deps --no-binary llama-cpp-python \
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
# out of the app's .venv. Reinstalled when the wheel changes (its sha256).
WHEEL_ID="$WHEEL $(sha256sum "$WHEEL" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.edgechat-wheel" 2>/dev/null)" != "$WHEEL_ID" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "$WHEEL[server]"
  echo "$WHEEL_ID" > "$VENV/.edgechat-wheel"
fi
echo "$VENV/bin/python"
