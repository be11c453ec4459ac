"""A guard against a reference-counting bug in PySide6 on Python older than 3.12.

Measured here with PySide6 6.12.0 on CPython 3.11: every `Signal.emit()` returns True without
taking a reference to it, and every Python override of a virtual returning a QVariant (such as
QAbstractItemModel.data) that returns None gives back one reference to None it never took. On
3.12+ None and True are immortal and this is harmless; on 3.11 their reference counts fall by
one each time, and after some thousands of emits or model lookups the interpreter dies with
"Fatal Python error: bool_dealloc / none_dealloc" (seen after ~15 minutes of indexing).

None, True and False are never deallocated in a correct program, so raising their reference
counts by a huge constant (what 3.12 does for immortal objects) is safe and makes the bug
harmless: at a million leaked references a second it would take years to reach zero.
`guard()` measures the leak first and only acts when it is present.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

_BOOST = 1 << 40
_applied = False


def leaks() -> dict[str, int]:
    """References to True and None lost by 100 signal emits and 100 model lookups."""
    from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, Qt, Signal

    class _Emitter(QObject):
        sig = Signal(int)

    class _Model(QAbstractListModel):
        def rowCount(self, parent=QModelIndex()) -> int:
            return 1

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            return None

    emitter = _Emitter()
    model = _Model()
    index = model.index(0)
    t0, n0 = sys.getrefcount(True), sys.getrefcount(None)
    for _ in range(100):
        emitter.sig.emit(1)
    t1 = sys.getrefcount(True)
    for _ in range(100):
        index.data(Qt.ItemDataRole.UserRole)
    n1 = sys.getrefcount(None)
    # Undo what the probe itself leaked before anything else can trip over it.
    _add(True, t0 - t1)
    _add(None, n0 - n1)
    return {"True": t0 - t1, "None": n0 - n1}


def _add(obj: object, n: int) -> None:
    if n > 0:
        ctypes.c_ssize_t.from_address(id(obj)).value += n


def guard() -> bool:
    """Make None, True and False effectively immortal if this PySide6 leaks references to
    them. Returns True when the guard was applied."""
    global _applied
    if _applied:
        return True
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython" or hasattr(sys, "getobjects"):
        return False  # immortal already / another object layout
    lost = leaks()
    if not any(v > 0 for v in lost.values()):
        return False
    for obj in (None, True, False):
        before = sys.getrefcount(obj)
        _add(obj, _BOOST)
        if sys.getrefcount(obj) - before != _BOOST:  # not the layout we expect: undo
            ctypes.c_ssize_t.from_address(id(obj)).value -= _BOOST
            return False
    _applied = True
    import PySide6

    log.warning("PySide6 %s on Python %d.%d drops references to True/None (%s per 100 calls); "
                "made them immortal to stay safe", PySide6.__version__, *sys.version_info[:2], lost)
    return True
