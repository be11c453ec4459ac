"""A real Chroma server for the tests: `chroma run` (the command chromadb installs) on a free
loopback port, in a folder of the test's, started and stopped by the test.

    with ChromaServer(tmp_path / "chroma") as server:
        server.url                            # chroma://127.0.0.1:PORT/NAME for a library NAME
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from tests.llama_server import _die_with_parent, free_port, stop_process, wait_until_up

CHROMA = Path(sys.executable).parent / ("chroma.exe" if sys.platform == "win32" else "chroma")


class ChromaServer:
    def __init__(self, path: Path, *, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.path = Path(path)
        self.host = host
        self.port = port or free_port(host)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.path.parent / f"chroma-{self.port}.log"

    def library(self, name: str | None = None) -> str:
        """The address of a team library on this server (a fresh name by default)."""
        return f"chroma://{self.host}:{self.port}/{name or 'lib-' + uuid.uuid4().hex[:12]}"

    def start(self, timeout: float = 60.0) -> "ChromaServer":
        if not CHROMA.is_file():
            raise RuntimeError(f"{CHROMA} is missing: chromadb (a dependency of EdgeChat) installs it")
        self.path.mkdir(parents=True, exist_ok=True)
        cmd = [str(CHROMA), "run", "--path", str(self.path), "--host", self.host, "--port", str(self.port)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
                                         preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        def up() -> bool:
            url = f"http://{self.host}:{self.port}/api/v2/heartbeat"
            return httpx.get(url, timeout=2, trust_env=False).status_code == 200

        if wait_until_up(self.proc, self.log, up, "chroma run", timeout, interval=0.2):
            return self
        self.stop()
        raise RuntimeError(f"chroma run did not answer within {timeout:.0f} s; log: {self.log}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        stop_process(proc)

    def __enter__(self) -> "ChromaServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
