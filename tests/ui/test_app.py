"""Start-up pieces: one instance per library, logging, the exception hook, and launching the
real app from the command line (a second launch brings the first forward and exits)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from edgechat.ui.crash import ExceptionHook, log_file, setup_logging, teardown_logging
from edgechat.ui.single_instance import InstanceServer, notify_running, server_name

ROOT = Path(__file__).resolve().parents[2]


def test_second_launch_reaches_the_first(qtbot, tmp_path):
    lib = tmp_path / "lib"
    other = tmp_path / "other"
    assert server_name(lib) == server_name(tmp_path / "x" / ".." / "lib")
    assert server_name(lib) != server_name(other)
    assert notify_running(lib, timeout_ms=200) is False
    server = InstanceServer(lib)
    assert server.listen()
    try:
        with qtbot.waitSignal(server.sig_activate, timeout=5000):
            assert notify_running(lib) is True
        assert notify_running(other, timeout_ms=200) is False
    finally:
        server.close()


def test_exception_hook_logs_and_shows(monkeypatch, caplog):
    hook = ExceptionHook()
    shown = []
    monkeypatch.setattr(hook, "show_dialog", lambda summary, details: shown.append((summary, details)))
    try:
        raise ValueError("the index is on fire")
    except ValueError as e:
        with caplog.at_level(logging.ERROR, logger="edgechat"):
            hook(type(e), e, e.__traceback__)
    assert shown and shown[0][0] == "ValueError: the index is on fire"
    assert "Traceback" in shown[0][1] and "test_exception_hook_logs_and_shows" in shown[0][1]
    assert "the index is on fire" in caplog.text


def test_logging_goes_to_a_rotating_file_with_qt_messages(qtbot):
    from PySide6.QtCore import qWarning

    path = setup_logging()
    try:
        assert path == log_file() and path.parent.name == "logs"
        logging.getLogger("edgechat.test").warning("a line for the log file")
        qWarning("a Qt warning routed into logging")
        for h in logging.getLogger().handlers:
            h.flush()
        text = path.read_text(encoding="utf-8")
        assert "a line for the log file" in text
        assert "qt: a Qt warning routed into logging" in text
    finally:
        teardown_logging()


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_launch_from_the_command_line_once_per_library(tmp_path):
    env = dict(os.environ)
    home = tmp_path / "home"
    env.update(EDGECHAT_HOME=str(home), QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    lib = tmp_path / "lib"
    cmd = [sys.executable, "-m", "edgechat", "--library", str(lib)]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    log = home / "logs" / "edgechat.log"
    try:
        assert _wait_for(lambda: log.is_file() and "window shown" in log.read_text(encoding="utf-8"), 60), \
            "the first instance did not show its window"
        assert _wait_for(lambda: (lib / "lock").is_file(), 60)
        second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert second.returncode == 0
        assert "already open" in second.stderr
        assert first.poll() is None  # the first one keeps running
    finally:
        first.send_signal(signal.SIGTERM)
        try:
            out, err = first.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            first.kill()
            raise
    assert first.returncode == 0, err.decode(errors="replace")[-2000:]
    text = log.read_text(encoding="utf-8")
    assert "EdgeChat closed" in text
