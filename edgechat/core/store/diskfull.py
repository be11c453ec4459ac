"""Telling "the disk is full" apart from other failures, and saying it plainly.

A full disk reaches the indexer in several shapes: OSError ENOSPC (no space), EDQUOT (over a
quota) or EFBIG (over the process's file size limit), SQLite's SQLITE_FULL ("database or disk is
full") or SQLITE_IOERR_WRITE ("disk I/O error": what SQLite reports when write() fails with
EFBIG), and Chroma's errors, which carry the OS message as text ("No space left on device (os
error 28)"). `disk_full_reason` finds one of them anywhere in an exception's chain.

What the library guarantees then: every file is committed in one SQLite transaction, so a failed
commit is rolled back and nothing is half-written; the files committed before stay searchable;
a vector index that fell behind is resynced at the next open (the library is not marked clean).
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

_FULL_ERRNOS = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
_FULL_SQLITE = {"SQLITE_FULL"}
_WRITE_SQLITE = {"SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_SHMSIZE"}
_FULL_TEXTS = (
    "no space left on device", "os error 28", "disk quota exceeded", "os error 122", "file too large",
    "os error 27", "database or disk is full",
)
LOW_SPACE = 64 * 1024 * 1024  # a write error with less free than this is the disk being full


class DiskFullError(OSError):
    """The library could not be written because its disk is full. The message is the line a
    person reads; the store is left consistent (see the module docstring)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _chain(exc: BaseException):
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(seen) < 20:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _free_bytes(path: Path) -> int | None:
    for p in (path, *path.parents):
        try:
            return shutil.disk_usage(p).free
        except OSError:
            continue
    return None


def _file_size_limited() -> bool:
    try:
        import resource
    except ImportError:  # Windows
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return soft != resource.RLIM_INFINITY


def disk_full_reason(exc: BaseException, where: Path) -> str | None:
    """What filled up, in words, if `exc` (or anything in its chain) is a disk-full failure
    while writing under `where`; else None."""
    for e in _chain(exc):
        if isinstance(e, DiskFullError):
            return e.message
        if isinstance(e, OSError) and e.errno in _FULL_ERRNOS:
            return f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")
        if isinstance(e, sqlite3.Error):
            name = getattr(e, "sqlite_errorname", "") or ""
            if name in _FULL_SQLITE:
                return f"SQLite: {e}"
            if name in _WRITE_SQLITE:
                free = _free_bytes(where)
                if _file_size_limited():
                    return f"SQLite: {e}, {name}: a write over this process's file size limit"
                if free is not None and free < LOW_SPACE:
                    return f"SQLite: {e}, {name}, with {free / 1e6:.1f} MB free"
        text = str(e).lower()
        if any(t in text for t in _FULL_TEXTS):
            return str(e)[:200]
    return None


def disk_full_message(reason: str, where: Path) -> str:
    return (f"disk full: the library at {where} could not be written ({reason}). "
            "Nothing was half-written: the files indexed before stay searchable. "
            "Free some space and index again to add the rest.")
