"""One running EdgeChat per library: the first instance listens on a local socket named after
the library (a folder, or a team library's chroma:// address); a second launch for the same
library asks it to come forward and exits.

The library's own write lock (edgechat.core.store.lock) is the last line of defence: even if two
launches race past this check, the second cannot open the library for writing."""

from __future__ import annotations

import getpass
import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

ACTIVATE = b"activate\n"


def library_key(library: Path | str) -> str:
    """A stable name for a library: a team library's address as TeamAddress spells it (it is
    no path), a folder's resolved path."""
    if str(library).strip().startswith("chroma:"):
        from edgechat.core.engine import TeamAddress

        return str(TeamAddress.parse(library))
    return str(Path(library).expanduser().resolve())


def server_name(library: Path | str) -> str:
    try:
        user = getpass.getuser()
    except (OSError, KeyError, ImportError):  # no name for this user id (OSError from Python 3.13)
        user = "user"
    key = f"{user}:{library_key(library)}"
    return "edgechat-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:20]


def notify_running(library: Path | str, timeout_ms: int = 500) -> bool:
    """True if an instance for `library` is running (it has been asked to come forward)."""
    sock = QLocalSocket()
    sock.connectToServer(server_name(library))
    if not sock.waitForConnected(timeout_ms):
        return False
    sock.write(ACTIVATE)
    sock.flush()
    sock.waitForBytesWritten(timeout_ms)
    sock.disconnectFromServer()
    return True


class InstanceServer(QObject):
    sig_activate = Signal()

    def __init__(self, library: Path | str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(library)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._connection)

    def listen(self) -> bool:
        if self.server.listen(self.name):
            return True
        # A stale socket left by a crashed instance (nobody answered notify_running).
        QLocalServer.removeServer(self.name)
        ok = self.server.listen(self.name)
        if not ok:
            log.warning("single-instance server could not listen: %s", self.server.errorString())
        return ok

    def _connection(self) -> None:
        # The message is one short line written right after connecting: read it here (a short
        # wait, only when another launch knocks) rather than keeping sockets and connections
        # around whose lifetimes would then have to be managed.
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            data = b""
            if sock.bytesAvailable() or sock.waitForReadyRead(300):
                data = bytes(sock.readAll())
            sock.abort()
            sock.deleteLater()
            if ACTIVATE.strip() in data:
                self.sig_activate.emit()

    def close(self) -> None:
        self.server.close()
