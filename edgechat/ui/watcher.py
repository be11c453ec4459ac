"""Watching the library's folders: a change re-indexes the folder it happened in, after a pause
(debounced: saving a file fires several events; copying a folder fires hundreds)."""

from __future__ import annotations

import logging
import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

log = logging.getLogger(__name__)


class LibraryWatcher(QObject):
    sig_changed = Signal(list)  # library roots to re-index

    def __init__(self, delay_ms: int = 1500, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._changed)
        self._watcher.fileChanged.connect(self._changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._fire)
        self._roots: list[str] = []
        self._dirty: set[str] = set()
        self.enabled = True

    def set_roots(self, roots: list[str]) -> None:
        self._roots = sorted(roots, key=len, reverse=True)

    def set_paths(self, dirs: list[str], files: list[str]) -> None:
        """Watch exactly these directories and files (those already watched are kept)."""
        want = set(dirs) | set(files)
        have = set(self._watcher.directories()) | set(self._watcher.files())
        gone = sorted(have - want)
        new = sorted(want - have)
        if gone:
            self._watcher.removePaths(gone)
        if new:
            failed = self._watcher.addPaths(new)
            if failed:
                log.info("not watching %d paths (system limit?)", len(failed))

    def watched(self) -> list[str]:
        return self._watcher.directories() + self._watcher.files()

    def _root_of(self, path: str) -> str | None:
        for root in self._roots:
            if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                return root
        return None

    def _changed(self, path: str) -> None:
        if not self.enabled:
            return
        root = self._root_of(path)
        if root is None:
            return
        self._dirty.add(root)
        self._timer.start()

    def _fire(self) -> None:
        roots, self._dirty = sorted(self._dirty), set()
        if roots:
            log.info("changes in %s: re-indexing", ", ".join(roots))
            self.sig_changed.emit(roots)

    def clear(self) -> None:
        paths = self.watched()
        if paths:
            self._watcher.removePaths(paths)
        self._timer.stop()
        self._dirty.clear()
