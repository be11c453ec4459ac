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
         "Why is the surface of Venus so hot? Describe Venus, Mercury and Jupiter in a long numbered list of "
         "facts about each planet.",
         "--max-tokens", "2000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1,
    )
    # The question matches the passages well above the evidence threshold, so the model is asked.
    # Sentences are shown once checked, so the first words may come late: interrupt once the model
    # has been asked (the status line, then a moment: it is reading the prompt or writing).
    status = ""
    deadline = time.monotonic() + 120
    while "checked against your documents" not in status and time.monotonic() < deadline:
        status += proc.stderr.readline()
    assert "checked against your documents" in status, status
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "[stopped]" in out
    assert "Traceback" not in err
