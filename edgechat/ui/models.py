"""Item models for the lists people look at: the library (folders and their files), the sources
of an answer, and the past chats. They hold plain data handed over by the workers."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

from edgechat.core.engine import READ_BY_OCR
from edgechat.core.records import FileState, LibraryFile

Index = QModelIndex | QPersistentModelIndex

STATE_TEXT = {"done": "indexed", "indexing": "indexing…", "removing": "removing…", "pending": "waiting"}


def _icon(which: QStyle.StandardPixmap) -> QIcon:
    app = QApplication.instance()
    return app.style().standardIcon(which) if isinstance(app, QApplication) else QIcon()


# ====================================================================== titles


def _squeezed(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def file_name_beside(title: object, path: object) -> str:
    """The file name to show beside a document's title: "" when the title is only the file name
    ("R-FAQ" for R-FAQ.pdf), which then stands alone."""
    name = os.path.basename(str(path or ""))
    stem = os.path.splitext(name)[0]
    return "" if not title or _squeezed(str(title)) in (_squeezed(stem), _squeezed(name)) else name


def document_label(title: object, path: object) -> str:
    """A document as a person tells it apart, on one line: its title with its file name beside it
    ("Field Inspection Report, Lower Mill — 20190314X00112.pdf"), or the file name alone."""
    name = os.path.basename(str(path or ""))
    beside = file_name_beside(title, path)
    return f"{title} \u2014 {beside}" if beside else name or str(title or "")


_WORD = re.compile(r"\S+\s*")
SHARED_WORDS = 3  # titles that start with this many words alike are shown with what they share shortened


def distinct_titles(titles: Sequence[str]) -> dict[str, str]:
    """Each title as shown beside the others: where several titles start with the same words
    (twenty reports titled "Field Inspection Report, <place>, <date>"), the part all of them share
    is shortened to its first word ("Field… Lower Mill, ..."), so what differs comes right after it
    and stays visible in a narrow list; a title no other starts like stays whole."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for t in dict.fromkeys(titles):
        words = _WORD.findall(t)
        if len(words) > SHARED_WORDS:
            groups.setdefault(tuple(w.strip().lower() for w in words[:SHARED_WORDS]), []).append(t)
    shown = {t: t for t in titles}
    for members in groups.values():
        if len(members) < 2:
            continue
        split = [_WORD.findall(t) for t in members]
        n = 0
        while all(len(w) > n + 1 for w in split) and len({w[n].strip().lower() for w in split}) == 1:
            n += 1
        if n < SHARED_WORDS:
            continue
        for t, words in zip(members, split):
            shown[t] = f"{words[0].strip()}\u2026 {''.join(words[n:]).strip()}"
    return shown


# ====================================================================== library


@dataclass
class _Root:
    path: str
    key: int  # stable internal id of its files' indexes (rows move, keys do not)
    files: list[LibraryFile] = field(default_factory=list)
    busy: bool = False
    offline: bool = False  # not there now (an unplugged drive): its files are kept

    @property
    def problems(self) -> int:
        return sum(1 for f in self.files if f.state in (FileState.FAILED, FileState.STALE))

    @property
    def indexed(self) -> int:
        return sum(1 for f in self.files if f.state in (FileState.DONE, FileState.STALE))


class LibraryModel(QAbstractItemModel):
    """Two levels: the library's folders (roots), and under each the files found in it, with
    their state ("indexed", or the problem that kept them out). Columns: name, state. A file is
    named by its title with its file name beside it (the file name alone when it has no other
    title), titles that start alike shortened where they are alike (distinct_titles)."""

    PathRole = Qt.ItemDataRole.UserRole + 1
    KindRole = Qt.ItemDataRole.UserRole + 2  # "root" | "file"
    ProblemRole = Qt.ItemDataRole.UserRole + 3
    TitledRole = Qt.ItemDataRole.UserRole + 4  # a file shown by a title of its own (elided at the right)
    COLUMNS = ("Name", "State")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._roots: list[_Root] = []
        self._by_key: dict[int, _Root] = {}
        self._next_key = 1
        self._busy_roots: set[str] = set()
        self._offline: set[str] = set()
        self._shown: dict[str, str] = {}  # title -> as shown among the others

    # ---------------------------------------------------------------- updates

    def set_library(self, roots: list[str], files: list[LibraryFile], offline: Iterable[str] = ()) -> None:
        """Bring the model to this state with row inserts, removals and data changes (no reset,
        so selection and expansion survive)."""
        self._offline = set(offline)
        shown = distinct_titles([f.title for f in files if file_name_beside(f.title, f.path)])
        retitled = shown != self._shown
        self._shown = shown
        by_root: dict[str, list[LibraryFile]] = {r: [] for r in roots}
        for f in files:
            root = f.root or ""
            if root not in by_root:
                root = next((r for r in roots if f.path.startswith(r.rstrip(os.sep) + os.sep)), root)
            by_root.setdefault(root, []).append(f)
        wanted = sorted(r for r in by_root if r in roots)
        # Remove roots that went away.
        for i in range(len(self._roots) - 1, -1, -1):
            if self._roots[i].path not in by_root or self._roots[i].path not in roots:
                self.beginRemoveRows(QModelIndex(), i, i)
                gone = self._roots.pop(i)
                self._by_key.pop(gone.key, None)
                self.endRemoveRows()
        # Insert new roots in order.
        for pos, path in enumerate(wanted):
            if pos >= len(self._roots) or self._roots[pos].path != path:
                self.beginInsertRows(QModelIndex(), pos, pos)
                root = _Root(path, self._next_key, busy=path in self._busy_roots)
                self._next_key += 1
                self._by_key[root.key] = root
                self._roots.insert(pos, root)
                self.endInsertRows()
        for row, root in enumerate(self._roots):
            root.offline = root.path in self._offline
            self._merge_files(row, root, sorted(by_root.get(root.path, []), key=lambda f: f.path))
            top = self.index(row, 0)
            self.dataChanged.emit(top, self.index(row, 1))
            if retitled and root.files:  # another file's title can change how this one is shown
                self.dataChanged.emit(self.index(0, 0, top), self.index(len(root.files) - 1, 0, top))

    def _merge_files(self, row: int, root: _Root, new: list[LibraryFile]) -> None:
        parent = self.index(row, 0)
        new_paths = {f.path for f in new}
        i = len(root.files) - 1
        while i >= 0:
            if root.files[i].path in new_paths:
                i -= 1
                continue
            j = i  # remove the run root.files[j..i] at once
            while j > 0 and root.files[j - 1].path not in new_paths:
                j -= 1
            self.beginRemoveRows(parent, j, i)
            del root.files[j : i + 1]
            self.endRemoveRows()
            i = j - 1
        # What is left of root.files is a subsequence of `new` (both sorted by path): walk
        # them together, updating equal rows and inserting each run of new ones at once.
        files = root.files
        k = 0
        while k < len(new):
            if k < len(files) and files[k].path == new[k].path:
                if files[k] != new[k]:
                    files[k] = new[k]
                    self.dataChanged.emit(self.index(k, 0, parent), self.index(k, 1, parent))
                k += 1
                continue
            j = k
            if k < len(files):
                target = files[k].path
                while new[j].path != target:
                    j += 1
            else:
                j = len(new)
            self.beginInsertRows(parent, k, j - 1)
            files[k:k] = new[k:j]
            self.endInsertRows()
            k = j

    def set_busy_roots(self, paths: list[str] | set[str]) -> None:
        self._busy_roots = set(paths)
        for row, root in enumerate(self._roots):
            busy = root.path in self._busy_roots
            if busy != root.busy:
                root.busy = busy
                self.dataChanged.emit(self.index(row, 0), self.index(row, 1))

    def roots(self) -> list[str]:
        return [r.path for r in self._roots]

    def indexed_count(self) -> int:
        return sum(r.indexed for r in self._roots)

    def problem_files(self) -> list[LibraryFile]:
        return [f for r in self._roots for f in r.files if f.state == FileState.FAILED]

    def find_file(self, path: str) -> QModelIndex:
        for row, root in enumerate(self._roots):
            for i, f in enumerate(root.files):
                if f.path == path:
                    return self.index(i, 0, self.index(row, 0))
        return QModelIndex()

    # ---------------------------------------------------------------- QAbstractItemModel

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(self.COLUMNS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            if row < len(self._roots):
                return self.createIndex(row, column, 0)
            return QModelIndex()
        if parent.internalId() != 0 or parent.column() != 0:
            return QModelIndex()
        r = parent.row()
        if r < len(self._roots) and row < len(self._roots[r].files):
            return self.createIndex(row, column, self._roots[r].key)  # internal id: the root's key
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        root = self._by_key.get(int(index.internalId()))
        if root is None:
            return QModelIndex()
        return self.createIndex(self._roots.index(root), 0, 0)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._roots)
        if parent.internalId() == 0 and parent.column() == 0 and parent.row() < len(self._roots):
            return len(self._roots[parent.row()].files)
        return 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 2:
            return self.COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def _item(self, index: Index) -> tuple[str, Any]:
        if index.internalId() == 0:
            return "root", self._roots[index.row()]
        return "file", self._by_key[int(index.internalId())].files[index.row()]

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not self.checkIndex(index):
            return None
        kind, item = self._item(index)
        col = index.column()
        if role == self.KindRole:
            return kind
        if kind == "root":
            root: _Root = item
            if role == self.PathRole:
                return root.path
            if role == Qt.ItemDataRole.DisplayRole:
                if col == 0:
                    return os.path.basename(root.path.rstrip(os.sep)) or root.path
                if root.busy:
                    return "indexing…"
                text = f"{root.indexed} indexed"
                if root.offline:
                    text = "offline · " + text
                if root.problems:
                    text += f" · {root.problems} ⚠"
                return text
            if role == Qt.ItemDataRole.ToolTipRole:
                tip = f"{root.path}\n{root.indexed} files indexed, {root.problems} with problems"
                if root.offline:
                    tip += ("\nOffline: this folder is not there now (an unplugged drive or an unmounted share?). "
                            "Its passages stay in the library and are checked again when it is back.")
                return tip
            if role == Qt.ItemDataRole.DecorationRole and col == 0:
                return _icon(QStyle.StandardPixmap.SP_DirIcon)
            if role == self.ProblemRole:
                return ""
            return None
        f: LibraryFile = item
        failed = f.state == FileState.FAILED
        stale = f.state == FileState.STALE
        if role == self.PathRole:
            return f.path
        if role == self.ProblemRole:
            return f.problem if failed else ""
        if role == self.TitledRole:
            return bool(file_name_beside(f.title, f.path))
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                root = f.root or ""
                rel = os.path.relpath(f.path, root) if root and f.path.startswith(root) else f.path
                rel = rel if rel != "." else os.path.basename(f.path)
                if file_name_beside(f.title, f.path):
                    return f"{self._shown.get(f.title, f.title)} \u2014 {rel}"
                return rel
            if failed:
                return f.problem or "not indexed"
            if stale:
                return f"old version kept: {f.problem}"
            if f.state == FileState.DONE:
                n = f.chunks or 0
                notes = "".join(", " + note for note in ("partly read", READ_BY_OCR) if note in f.detail)
                return f"{n} passage{'s' if n != 1 else ''}" + notes
            return STATE_TEXT.get(f.state, f.state)
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [f.path]
            if f.title:
                lines.append(f"Title: {f.title}")
            if failed:
                lines.append(f"Not indexed: {f.problem}" + (f" ({f.detail})" if f.detail else ""))
            elif stale:
                lines.append(f"This file cannot be read now ({f.problem}"
                             + (f": {f.detail}" if f.detail else "") + "); answers use its last good version, "
                             f"{f.chunks or 0} passage(s).")
            elif f.state == FileState.DONE:
                lines.append(f"{f.pages or 0} page(s), {f.chunks or 0} passage(s)")
                if f.detail:
                    lines.append(f.detail[:1].upper() + f.detail[1:])
            return "\n".join(lines)
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            return _icon(QStyle.StandardPixmap.SP_MessageBoxWarning if failed or stale
                         else QStyle.StandardPixmap.SP_FileIcon)
        if role == Qt.ItemDataRole.ForegroundRole and failed and col == 1:
            app = QApplication.instance()
            if isinstance(app, QApplication):
                from PySide6.QtGui import QPalette

                return app.palette().brush(QPalette.ColorRole.PlaceholderText)
        return None


# ====================================================================== sources

# What a person recognises a document by; producer/creator software and encodings are noise.
_SHOWN_METADATA = ("author", "created", "modified", "pages", "language", "publisher")


def metadata_line(md: dict[str, Any]) -> str:
    parts = []
    for key in _SHOWN_METADATA:
        value = str(md.get(key) or "").strip()
        if not value:
            continue
        if key in ("created", "modified") and len(value) >= 10 and value[4] == "-":
            value = value[:10]  # the date is enough
        parts.append(f"{key}: {value}")
    return " · ".join(parts)



class SourceListModel(QAbstractListModel):
    """The numbered sources of one answer (dicts as saved by edgechat.core.conversations, plus
    "content" while the answer is fresh)."""

    NumberRole = Qt.ItemDataRole.UserRole + 1
    TitleRole = Qt.ItemDataRole.UserRole + 2
    PageRole = Qt.ItemDataRole.UserRole + 3
    ScoreRole = Qt.ItemDataRole.UserRole + 4
    MetadataRole = Qt.ItemDataRole.UserRole + 5
    SnippetRole = Qt.ItemDataRole.UserRole + 6
    PathRole = Qt.ItemDataRole.UserRole + 7
    CitedRole = Qt.ItemDataRole.UserRole + 8
    SourceRole = Qt.ItemDataRole.UserRole + 9
    RelevanceRole = Qt.ItemDataRole.UserRole + 10  # in words, against the best source's score
    FirstAlsoFoundRole = Qt.ItemDataRole.UserRole + 11  # the first source the answer does not cite
    FileNameRole = Qt.ItemDataRole.UserRole + 12  # shown beside TitleRole; "" when the title is the file name

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._sources: list[dict[str, Any]] = []
        self._cited: set[int] = set()
        self._best = 0.0
        self._shown: dict[str, str] = {}  # title -> as shown beside the other sources' titles

    def set_sources(self, sources: list[dict[str, Any]], cited: list[int] | set[int] = ()) -> None:
        """The sources the answer cites first, then the others ("also found"), each by number."""
        self.beginResetModel()
        self._cited = set(cited)
        self._sources = sorted(sources, key=lambda s: (int(s.get("ordinal") or 0) not in self._cited,
                                                       int(s.get("ordinal") or 0)))
        self._best = max((float(s.get("score") or 0.0) for s in self._sources), default=0.0)
        self._shown = distinct_titles([str(s["title"]) for s in self._sources
                                       if s.get("title") and file_name_beside(s["title"], s.get("path"))])
        self.endResetModel()

    def relevance(self, score: float) -> str:
        """A source's score in words, against the best of this answer's sources."""
        share = score / self._best if self._best > 0 else 0.0
        return "close match" if share >= 0.85 else "related" if share >= 0.6 else "loosely related"

    def clear(self) -> None:
        self.set_sources([])

    def source(self, row: int) -> dict[str, Any]:
        return self._sources[row]

    def row_of(self, number: int) -> int:
        for i, s in enumerate(self._sources):
            if int(s.get("ordinal") or 0) == number:
                return i
        return -1

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._sources)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not self.checkIndex(index):
            return None
        s = self._sources[index.row()]
        n = int(s.get("ordinal") or 0)
        if role == Qt.ItemDataRole.DisplayRole:
            return f"[{n}] {document_label(s.get('title'), s.get('path'))} · page {s.get('page', 1)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            title = f"{s.get('title')}\n" if file_name_beside(s.get("title"), s.get("path")) else ""
            return f"{title}{s.get('path', '')}\n\n{s.get('snippet', '')}"
        if role == self.NumberRole:
            return n
        if role == self.TitleRole:
            if file_name_beside(s.get("title"), s.get("path")):
                return self._shown.get(str(s["title"]), str(s["title"]))
            return os.path.basename(str(s.get("path", ""))) or s.get("title") or ""
        if role == self.FileNameRole:
            return file_name_beside(s.get("title"), s.get("path"))
        if role == self.PageRole:
            return int(s.get("page") or 1)
        if role == self.ScoreRole:
            return float(s.get("score") or 0.0)
        if role == self.MetadataRole:
            return metadata_line(s.get("metadata") or {})
        if role == self.SnippetRole:
            return s.get("snippet") or ""
        if role == self.PathRole:
            return s.get("path") or ""
        if role == self.CitedRole:
            return n in self._cited
        if role == self.RelevanceRole:
            return self.relevance(float(s.get("score") or 0.0))
        if role == self.FirstAlsoFoundRole:
            return n not in self._cited and (index.row() == 0 or int(
                self._sources[index.row() - 1].get("ordinal") or 0) in self._cited)
        if role == self.SourceRole:
            return dict(s)
        return None

    def roleNames(self) -> dict[int, bytes]:
        names = super().roleNames()
        names.update({self.NumberRole: b"number", self.TitleRole: b"title", self.PageRole: b"page",
                      self.ScoreRole: b"score", self.MetadataRole: b"metadata", self.SnippetRole: b"snippet",
                      self.PathRole: b"path", self.CitedRole: b"cited"})
        return names


# ====================================================================== conversations


class ConversationListModel(QAbstractListModel):
    IdRole = Qt.ItemDataRole.UserRole + 1

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._items: list[Any] = []  # ConversationInfo
        self.current_id = ""

    def set_items(self, items: list[Any]) -> None:
        self.beginResetModel()
        self._items = list(items)
        self.endResetModel()

    def set_current(self, conversation_id: str) -> None:
        self.current_id = conversation_id
        if self._items:
            self.dataChanged.emit(self.index(0), self.index(len(self._items) - 1))

    def row_of(self, conversation_id: str) -> int:
        return next((i for i, c in enumerate(self._items) if c.id == conversation_id), -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not self.checkIndex(index):
            return None
        c = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return c.title
        if role == Qt.ItemDataRole.ToolTipRole:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.updated))
            return f"{c.title}\n{c.turns} question(s), last {when}"
        if role == self.IdRole:
            return c.id
        if role == Qt.ItemDataRole.FontRole and c.id == self.current_id:
            from PySide6.QtGui import QFont

            font = QFont()
            font.setBold(True)
            return font
        return None
