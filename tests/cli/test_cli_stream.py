"""`edgechat ask` with the real local model: it streams, and Ctrl-C stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from edgechat.cli import main
from tests.helpers import make_corpus


def test_ask_streams_and_ctrl_c_stops_cleanly(tmp_path, smollm2_dir, embedder):
    docs = make_corpus(tmp_path / "docs")
    lib = tmp_path / "lib"
    assert main(["--library", str(lib), "index", str(docs)]) == 0
    from edgechat.core.llm import manager

    assert manager.active_model() is not None, "no active language model: run scripts/setup.sh"
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "edgechat", "--library", str(lib), "ask",
         "Write a numbered list of one hundred different facts about planets, bread and gardens.",
         "--max-tokens", "2000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1,
    )
    # Wait for the first streamed words, then interrupt mid-answer.
    first = ""
    deadline = time.monotonic() + 120
    while not first.strip() and time.monotonic() < deadline:
        first += proc.stdout.read(1)
    assert first.strip(), "no streamed output before the deadline"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    text = first + out
    assert proc.returncode == 0, err
    assert "[stopped]" in text
    assert "Traceback" not in err
