"""Model folders: what the manager, the SmolLM2 builder and the downloader all do with one.

A language model is a folder `<models_dir>/llm/<name>/` (see edgechat.core.llm.manager for the
layout). This module holds the steps they share: checking a model's name, listing the folder's
files with sizes and sha256 for its manifest.json, writing JSON atomically, measuring a folder,
and putting a finished folder in place with renames only. It imports nothing of the package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from edgechat.core.fileio import sha256_file

MANIFEST_FILE = "manifest.json"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


class ModelError(RuntimeError):
    """A model operation that cannot be done. The message is for a person."""


def validate_name(name: str) -> str:
    """`name` when it can be a model folder's name (no path, not hidden); else ModelError."""
    if not isinstance(name, str) or not _NAME_RE.match(name) or name in (".", ".."):
        raise ModelError(
            f"invalid model name {name!r}: use letters, digits, '.', '-', '_' or '+' "
            "(at most 128, not starting with '.')"
        )
    return name


def file_table(folder: Path) -> dict[str, dict[str, Any]]:
    """{relative path: {"size", "sha256"}} of every file in `folder` but its manifest.json,
    in path order: the "files" of a manifest."""
    out = {}
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        if rel != MANIFEST_FILE:
            out[rel] = {"size": f.stat().st_size, "sha256": sha256_file(f)}
    return out


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as indented JSON so that a crash leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def folder_size(folder: Path) -> int:
    """Bytes of all the files under `folder`."""
    return sum(f.stat().st_size for f in Path(folder).rglob("*") if f.is_file())


def install_folder(staging: Path, target: Path) -> None:
    """Put `staging` at `target` with renames only (both on one file system): an existing
    `target` is moved aside first and deleted after, so `target` is always either the old or
    the new complete folder, never a half-written one."""
    target = Path(target)
    os.chmod(staging, 0o755)  # mkdtemp made it private; a model folder is ordinary data
    old = None
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}-{time.monotonic_ns()}")
        os.replace(target, old)
    try:
        os.replace(staging, target)
    except OSError:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
