#!/usr/bin/env bash
# Launch to window shown, from a built bundle, with a clean HOME each time (first start: no
# library, no settings). The first run after unpacking reads the bundle from disk ("cold" as far
# as this machine's page cache allows without dropping it); the others find it cached ("warm").
#   packaging/launch_time.sh [BUNDLE_DIR] [RUNS]     (default dist/EdgeChat, 4 runs)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=${1:-$ROOT/dist/EdgeChat}
RUNS=${2:-4}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/edgechat-launch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -r "$BUNDLE" "$WORK/EdgeChat"  # a fresh copy: its files are new to the page cache
export QT_QPA_PLATFORM=offscreen
unset EDGECHAT_HOME EDGECHAT_MODELS EDGECHAT_LIBRARY EDGECHAT_CACHE XDG_STATE_HOME XDG_DATA_HOME || true
for i in $(seq 1 "$RUNS"); do
  export HOME=$WORK/home$i
  mkdir -p "$HOME"
  t0=$(date +%s.%N)
  "$WORK/EdgeChat/edgechat" > "$WORK/out$i" 2>&1 &
  pid=$!
  shown=
  for _ in $(seq 1 600); do
    log=$(find "$HOME" -name edgechat.log 2>/dev/null | head -1)
    if [ -n "$log" ] && grep -q "window shown" "$log"; then shown=$(date +%s.%N); break; fi
    sleep 0.02
  done
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "$shown" ] || { echo "run $i: the window did not show" >&2; exit 1; }
  python3 -c "import sys; print(f'run {sys.argv[1]}: {float(sys.argv[3]) - float(sys.argv[2]):.2f} s to window shown')" "$i" "$t0" "$shown"
done
