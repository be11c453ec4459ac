#!/usr/bin/env bash
# Smoke test of the BUILT bundle, used as a new user would (run by .ci/run after the tests):
#
#   packaging/smoke.sh [ARCHIVE.tar.gz | BUNDLE_DIR]    (default: the archive packaging/build.sh made)
#
# The archive is unpacked into a temporary folder and run with a clean HOME (no EdgeChat data, no
# models: the embedder must come from the bundle), every EDGECHAT_* variable unset, and under
# strace, which records every connect/sendto/sendmsg of the app and its engine process. It checks:
#   1. `edgechat --version` prints the checkout's version;
#   2. `edgechat index <sample>` indexes the bundled sample documents (offline, first start);
#   3. `edgechat ask ... --extractive --json` answers from the right document, with a citation;
#   4. the window opens offscreen, shows, starts its engine process, stays up, closes on SIGTERM;
#   5. nothing connected to an address off loopback; no embedder was built in the user's folder.
# Any failure exits non-zero with the reason.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
t_start=$(date +%s)
say() { echo "smoke: $*"; }
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }

command -v strace >/dev/null || fail "strace is required (apt-get install strace)"
TARGET=${1:-}
if [ -z "$TARGET" ]; then
  TARGET=$(ls -t "$ROOT"/dist/EdgeChat-*-linux-*.tar.gz 2>/dev/null | head -1 || true)
  [ -n "$TARGET" ] || fail "no archive in dist/: run packaging/build.sh first"
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/edgechat-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [ -f "$TARGET" ]; then
  say "unpacking $TARGET"
  tar -C "$WORK" -xzf "$TARGET"
  APPDIR=$WORK/EdgeChat
else
  APPDIR=$(cd "$TARGET" && pwd)
fi
EXE=$APPDIR/edgechat
[ -x "$EXE" ] || fail "no executable at $EXE"
for f in edgechat.desktop edgechat.svg install.sh; do
  [ -f "$APPDIR/$f" ] || [ ! -f "$TARGET" ] || fail "the archive lacks $f"
done

# A language model to try the bundle's onnxruntime-genai with: $EDGECHAT_SMOKE_LLM, else the
# default model scripts/setup.sh builds on this machine (found before HOME changes). None: skipped.
LLM=${EDGECHAT_SMOKE_LLM:-}
if [ -z "$LLM" ]; then
  LLM=$(cd "$ROOT" && { .venv/bin/python -c 'from edgechat.core import paths; print(paths.llm_dir() / "smollm2-135m-instruct-int8")' 2>/dev/null || true; })
fi

# A clean user: nothing of EdgeChat's in HOME, no EdgeChat variables, no display.
export HOME=$WORK/home
mkdir -p "$HOME"
unset EDGECHAT_HOME EDGECHAT_MODELS EDGECHAT_LIBRARY EDGECHAT_CACHE EDGECHAT_DEBUG \
  XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME XDG_CONFIG_HOME DISPLAY WAYLAND_DISPLAY || true
export QT_QPA_PLATFORM=offscreen
TRACES=$WORK/traces
mkdir -p "$TRACES"
traced() {  # traced NAME CMD... : run under strace, the trace kept for the last check
  local name=$1; shift
  strace -f -qq -e trace=connect,sendto,sendmsg -o "$TRACES/$name" "$@"
}

# 1. version
want="edgechat $(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/edgechat/__init__.py")"
got=$("$EXE" --version 2>&1) || fail "--version exited non-zero: $got"
[ "$got" = "$want" ] || fail "--version printed '$got', expected '$want'"
say "1/5 version: $got"

# 2. index the sample documents (a copy, as a user's folder)
DOCS=$WORK/docs
cp -r "$APPDIR/_internal/resources/sample" "$DOCS" 2>/dev/null || cp -r "$ROOT/resources/sample" "$DOCS"
t=$(date +%s)
traced index "$EXE" index "$DOCS" --json > "$WORK/index.json" 2> "$WORK/index.err" \
  || fail "index exited non-zero: $(tail -5 "$WORK/index.err")"
say "2/5 indexed $DOCS in $(( $(date +%s) - t )) s: $(tr -d '\n' < "$WORK/index.json" | cut -c1-160)"

# 3. an extractive answer, as JSON
t=$(date +%s)
traced ask "$EXE" ask "How does EdgeChat keep my documents private?" --extractive --json \
  > "$WORK/ask.json" 2> "$WORK/ask.err" || fail "ask exited non-zero: $(tail -5 "$WORK/ask.err")"
python3 - "$WORK/ask.json" "$WORK/index.json" <<'EOF' || fail "the answer is not what it should be"
import json, sys
index = json.load(open(sys.argv[2]))
answer = json.load(open(sys.argv[1]))
text = (answer.get("answer") or "").strip()
sources = answer.get("sources") or []
assert text, "empty answer"
assert sources, "no sources"
assert sources[0]["path"].endswith("welcome-to-edgechat.md"), f"top source is {sources[0]['path']}"
assert answer.get("citations"), "no citations"
assert "private" in text.lower() or "network" in text.lower(), f"answer does not quote the privacy passage: {text[:200]}"
print("smoke: 3/5 answer:", " ".join(text.split())[:140])
EOF
say "    asked in $(( $(date +%s) - t )) s"
[ ! -e "$HOME/.local/share/EdgeChat/models/embedders/all-MiniLM-L6-v2" ] \
  || fail "an embedder was built in the user's folder: the bundled one was not used"

# 3b. a language model imported into the bundle's app answers (onnxruntime-genai loads its
#     onnxruntime library by path: a bundle without it falls back to quoting)
if [ -n "$LLM" ] && [ -f "$LLM/genai_config.json" ]; then
  t=$(date +%s)
  "$EXE" models import "$LLM" > "$WORK/import.out" 2>&1 || fail "models import failed: $(tail -3 "$WORK/import.out")"
  traced llm "$EXE" ask "What formats does EdgeChat read?" --max-tokens 16 --json \
    > "$WORK/llm.json" 2> "$WORK/llm.err" || fail "ask with a model exited non-zero: $(tail -5 "$WORK/llm.err")"
  python3 - "$WORK/llm.json" "$WORK/llm.err" <<'EOF' || fail "the language model did not answer"
import json, sys
answer = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
client = (answer.get("diagnostics") or {}).get("client")
assert client and client != "extractive", f"answered by {client!r}, not the model: {err.strip()[-300:]}"
EOF
  say "3b  the imported model ($(basename "$LLM")) answered in $(( $(date +%s) - t )) s (import included)"
else
  say "3b  skipped: no language model on this machine (set EDGECHAT_SMOKE_LLM=DIR)"
fi

# 4. the window, offscreen: it shows, starts its engine process, stays up, closes on SIGTERM
strace -f -qq -e trace=connect,sendto,sendmsg -o "$TRACES/window" "$EXE" > "$WORK/window.out" 2>&1 &
pid=$!  # strace itself (not a subshell), so its child is the app
up=0
for _ in $(seq 1 60); do
  sleep 0.5
  kill -0 "$pid" 2>/dev/null || break
  log=$(find "$HOME" -name edgechat.log 2>/dev/null | head -1)
  if [ -n "$log" ] && grep -q "window shown" "$log"; then up=1; break; fi
done
[ "$up" = 1 ] || { kill "$pid" 2>/dev/null || true; fail "the window did not show: $(tail -5 "$WORK/window.out")"; }
sleep 5
kill -0 "$pid" 2>/dev/null || fail "the window died within 5 s of showing: $(tail -5 "$WORK/window.out")"
# $pid is strace; its child is the app, and the app's children its engine process (and
# multiprocessing's resource tracker)
app_pid=$(pgrep -P "$pid" | head -1 || true)
[ -n "$app_pid" ] || fail "no app process under strace"
engines=$(pgrep -P "$app_pid" -f 'multiprocessing-fork' | wc -l || true)
kill -TERM "$app_pid"  # strace exits with the app's status
rc=0
for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$pid" 2>/dev/null; then
  pkill -KILL -P "$app_pid" 2>/dev/null || true
  kill -KILL "$app_pid" "$pid" 2>/dev/null || true
  fail "the window did not close within 30 s of SIGTERM"
fi
wait "$pid" || rc=$?
[ "$rc" = 0 ] || fail "the window exited with status $rc after SIGTERM: $(tail -5 "$WORK/window.out")"
[ "$engines" -ge 1 ] || fail "the window's engine process was not running"
if grep -q "Traceback" "$WORK/window.out" "$log"; then
  fail "a traceback in the window's output or log: $(grep -h -A3 Traceback "$WORK/window.out" "$log" | head -8)"
fi
say "4/5 window shown, engine process up, closed cleanly on SIGTERM"

# 5. no connection off loopback, from any of the runs (the same rule as tests/core/test_crash_and_privacy.py)
python3 - "$TRACES" <<'EOF' || fail "the app connected to another machine"
import pathlib, re, sys
addr = re.compile(r'(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")')
bad, calls = [], 0
for trace in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    for line in trace.read_text(errors="replace").splitlines():
        if "connect(" not in line and "sendto(" not in line and "sendmsg(" not in line:
            continue
        calls += 1
        for v4, v6 in addr.findall(line):
            a = v4 or v6
            if a.startswith("127.") or a in ("::1", "0.0.0.0", "::"):
                continue
            bad.append(f"{trace.name}: {line.strip()}")
if bad:
    print("\n".join(bad[:10]), file=sys.stderr)
    sys.exit(1)
print(f"smoke: 5/5 no connection off loopback ({calls} socket calls traced)")
EOF
say "passed in $(( $(date +%s) - t_start )) s"
