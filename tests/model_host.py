"""A local stand-in for the model host (Hugging Face), for tests: serves a folder over HTTP on
127.0.0.1 from a thread, as a model hub's "resolve" URLs do, with Range requests (206, 416).

The internet is not reachable where the tests run, and they must never leave the machine: a
catalog entry is pointed at this server instead (tests build a CatalogEntry whose URLs are
`host.url + "/" + file`). What the downloader asked is kept in `requests`; `hold(name, after)`
makes the next response for `name` stop after `after` bytes of its body until the returned
event is set, so that a test can cancel a download in the middle, deterministically. Ways to
fail, for the downloader's tests: `drop_after[name] = [n1, n2, ...]` makes the next responses for
that file send only n bytes of their body and close the connection; `ignore_range` answers 200
always; `redirects[name] = (target, etag)` answers 302 to `target` with a hub's X-Linked-Etag.

    with LocalModelHost(folder) as host:
        entry = host.entry("served-model", sha256=True)
"""

from __future__ import annotations

import hashlib
import http.server
import re
import socket
import threading
from pathlib import Path


class LocalModelHost:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.requests: list[tuple[str, str | None]] = []  # (file, Range header)
        self.holds: dict[str, tuple[int, threading.Event, threading.Event]] = {}  # name -> (after, reached, go)
        self.drop_after: dict[str, list[int]] = {}
        self.ignore_range = False
        self.redirects: dict[str, tuple[str, str | None]] = {}  # name -> (target, X-Linked-Etag)
        self._gos: list[threading.Event] = []
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                try:
                    host._serve(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the downloader hung up (cancelled): nothing to tell

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="local-model-host", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}"

    def hold(self, name: str, after: int) -> tuple[threading.Event, threading.Event]:
        """The next response for `name` sends `after` bytes of its body, sets `reached`, and
        sends the rest only once `go` is set. Returns (reached, go)."""
        reached, go = threading.Event(), threading.Event()
        self.holds[name] = (after, reached, go)
        self._gos.append(go)
        return reached, go

    def _serve(self, h: http.server.BaseHTTPRequestHandler) -> None:
        name = h.path.lstrip("/").split("?")[0]
        rng = h.headers.get("Range")
        self.requests.append((name, rng))
        if name in self.redirects:
            target, etag = self.redirects[name]
            h.send_response(302)
            h.send_header("Location", f"/{target}")
            if etag:
                h.send_header("X-Linked-Etag", f'"{etag}"')
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        f = self.root / name
        if not name or ".." in name or not f.is_file():
            h.send_error(404, "Not Found")
            return
        size = f.stat().st_size
        start = 0
        m = re.fullmatch(r"bytes=(\d+)-", rng or "")
        if m and not self.ignore_range:
            start = int(m.group(1))
            if start >= size:
                h.send_response(416)
                h.send_header("Content-Range", f"bytes */{size}")
                h.send_header("Content-Length", "0")
                h.end_headers()
                return
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        else:
            h.send_response(200)
        h.send_header("Content-Length", str(size - start))
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Type", "application/octet-stream")
        h.end_headers()
        hold = self.holds.pop(name, None)
        drops = self.drop_after.get(name)
        if drops:  # send the first n bytes of the body, then break the connection
            with open(f, "rb") as src:
                src.seek(start)
                h.wfile.write(src.read(drops.pop(0)))
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        sent = 0
        with open(f, "rb") as src:
            src.seek(start)
            while block := src.read(1 << 20):
                if hold is not None and sent + len(block) >= hold[0]:
                    cut = hold[0] - sent
                    h.wfile.write(block[:cut])
                    h.wfile.flush()
                    sent += cut
                    block = block[cut:]
                    hold[1].set()
                    hold[2].wait(60)
                    hold = None
                h.wfile.write(block)
                sent += len(block)

    def entry(self, name: str, *, files: list[str] | None = None, sha256: bool = True, wrong_sha256: str = "",
              skip: tuple[str, ...] = ("manifest.json",), title: str = "",
              description: str = "A model served by the test."):
        """A catalog entry for the served folder: every file with its URL here, its size and
        (with `sha256`) its hash; `wrong_sha256` names a file given a hash it does not have.
        Files named in `skip` are not part of the model (EdgeChat's own manifest.json)."""
        from edgechat.core.engine import CatalogEntry, CatalogFile

        out = []
        for rel in files or sorted(p.name for p in self.root.iterdir() if p.is_file() and p.name not in skip):
            p = self.root / rel
            digest = sha256_of(p) if sha256 else None
            if rel == wrong_sha256:
                digest = "0" * 64
            out.append(CatalogFile(rel, f"{self.url}/{rel}", size=p.stat().st_size, sha256=digest))
        total = sum((self.root / f.path).stat().st_size for f in out)
        return CatalogEntry(name=name, title=title or f"{name} (served)", description=description,
                            license="Apache-2.0", homepage=self.url, files=tuple(out), approx_bytes=total)

    def __enter__(self) -> "LocalModelHost":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for go in self._gos:
            go.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: a host that cannot be reached."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


_SHA_CACHE: dict[tuple[str, int, float], str] = {}


def sha256_of(path: Path) -> str:
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime)
    if key not in _SHA_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
        _SHA_CACHE[key] = h.hexdigest()
    return _SHA_CACHE[key]
