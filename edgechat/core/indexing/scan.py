"""The one walk over a library's folders: what the indexer reads and what the window watches.

Hidden files and folders, Office lock files (`~$name`) and tool folders (`__pycache__`,
`node_modules`, version-control folders) are never part of a library.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".svn", ".hg"})


def _walk(root: Path) -> Iterator[tuple[str, list[str]]]:
    """(folder, its file names) for every folder under `root`, in a stable order."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        yield dirpath, sorted(n for n in filenames if not n.startswith(".") and not n.startswith("~$"))


def scan(root: Path) -> Iterable[Path]:
    """Every regular, non-hidden file under `root` (or `root` itself if it is a file)."""
    if root.is_file():
        yield root
        return
    for dirpath, names in _walk(root):
        for name in names:
            p = Path(dirpath) / name
            if p.is_file():
                yield p


def watch_list(roots: Sequence[str], max_dirs: int = 4000, max_files: int = 4000) -> tuple[list[str], list[str]]:
    """The folders and files to watch for changes, at most `max_dirs` and `max_files` (file
    systems limit watches). A root that is a file is watched with its folder."""
    dirs: list[str] = []
    files: list[str] = []
    for root in roots:
        r = Path(root)
        if r.is_file():
            files.append(root)
            dirs.append(str(r.parent))
            continue
        if not r.is_dir():
            continue
        for dirpath, names in _walk(r):
            if len(dirs) < max_dirs:
                dirs.append(dirpath)
            for name in names:
                if len(files) < max_files:
                    files.append(os.path.join(dirpath, name))
            if len(dirs) >= max_dirs and len(files) >= max_files:
                return dirs, files
    return dirs, files
