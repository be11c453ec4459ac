"""Library › Open a team library…: the address of a team library on a Chroma server
(chroma://HOST:PORT/NAME), checked before the window switches to it.

The address is read by TeamAddress.parse (a malformed one is refused with its one line), then
the server is asked, on a thread of its own, whether it answers and holds the library
(probe_team_library: Chroma's heartbeat and the library's collection, no chromadb in the
window's process). A server that does not answer is one line under the address and nothing
changes. A library the server does not hold yet is named, and Open a second time creates it
(the desktop that indexes a new team library starts so). After `accept()`, `address` is the
library to open.

TeamAddDialog asks, before folders are indexed into a team library, who may read them.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from edgechat.core.engine import Readers, TeamAddress, TeamProbe, probe_team_library

LAST_ADDRESS = "library/teamAddress"  # QSettings: the last team library opened from the window


class _Signals(QObject):
    probed = Signal(object, object)  # TeamAddress, TeamProbe


class TeamLibraryDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, *, qsettings: QSettings | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open a team library")
        self.qsettings = qsettings
        self.address: TeamAddress | None = None
        self._create: TeamAddress | None = None  # Open again creates this library on its server
        self._signals = _Signals(self)
        self._signals.probed.connect(self._probed)
        self._busy = False

        intro = QLabel("A team library is one index on a Chroma server, shared by a team. Its address:")
        intro.setWordWrap(True)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("chroma://HOST:PORT/NAME")
        self.edit.setAccessibleName("Team library address")
        self.edit.setMinimumWidth(420)
        last = qsettings.value(LAST_ADDRESS, "") if qsettings is not None else ""
        self.edit.setText(str(last or ""))
        self.edit.textChanged.connect(self._edited)
        intro.setBuddy(self.edit)
        self.error = QLabel("", self)
        self.error.setObjectName("teamAddressError")
        self.error.setStyleSheet("color: #b00020;")
        self.error.setWordWrap(True)  # one sentence, wrapped to the dialog's width
        self.error.setAccessibleName("Problem with the address")
        self.note = QLabel("Questions, and the passages they find, go to that server; answers are still "
                           "checked on this computer.", self)
        self.note.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.open_button = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        self.buttons.accepted.connect(self.try_open)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.edit)
        layout.addWidget(self.error)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)

    def _edited(self) -> None:
        self._create = None
        if not self._busy:
            self.error.setText("")

    def try_open(self) -> None:
        """Open: the address is parsed, then its server asked (the answer comes back in
        _probed); the dialog closes only on an address whose server answers."""
        if self._busy:
            return
        text = self.edit.text().strip()
        try:
            address = TeamAddress.parse(text if text.startswith("chroma:") or not text else "chroma://" + text)
        except ValueError as e:
            self._fail(str(e))
            return
        if address is None:
            self._fail("Give the team library's address, as chroma://HOST:PORT/NAME.")
            return
        if address == self._create:  # the user read that it does not exist yet, and opens it anyway
            self._accept(address)
            return
        self._busy = True
        self.open_button.setEnabled(False)
        self.error.setText(f"Asking {address.server}…")
        signals = self._signals

        def ask() -> None:
            found = probe_team_library(address)
            try:
                signals.probed.emit(address, found)
            except RuntimeError:  # the dialog was closed meanwhile: nobody waits for the answer
                pass

        threading.Thread(target=ask, name="edgechat-team-probe", daemon=True).start()

    def _probed(self, address: TeamAddress, found: TeamProbe) -> None:
        self._busy = False
        self.open_button.setEnabled(True)
        if not found.answers:
            self._fail(found.message)
        elif not found.exists:
            self._create = address
            self._fail(f"{address.server} holds no team library named {address.name} yet: "
                       "Open again creates it (empty), to index folders into.")
        else:
            self._accept(address)

    def _fail(self, message: str) -> None:
        self.error.setText(" ".join(message.split()))  # one line
        self.error.setToolTip(self.error.text())

    def _accept(self, address: TeamAddress) -> None:
        self.address = address
        if self.qsettings is not None:
            self.qsettings.setValue(LAST_ADDRESS, str(address))
        self.accept()


class TeamAddDialog(QDialog):
    """Before folders or files are indexed into a team library: that their passages go to its
    server, and who may read them. After `accept()`, `readers()` is what `Engine.index` takes:
    None keeps what was set before (everyone, for a folder new to the library), else a list of
    users and @groups."""

    def __init__(self, team: TeamAddress, paths: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add to the team library")
        names = "\n".join(paths[:10]) + ("\n…" if len(paths) > 10 else "")
        intro = QLabel(f"Index these into the team library {team}?\n\n{names}\n\n"
                       f"Their passages are sent to the server at {team.server}.")
        intro.setWordWrap(True)
        who = QLabel("Who may read them in EdgeChat:")
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("everyone on the team, or names and @groups: alice, bob, @finance")
        self.edit.setAccessibleName("Who may read them")
        self.edit.setMinimumWidth(420)
        who.setBuddy(self.edit)
        note = QLabel("Left empty, a new folder is open to everyone on the team, and a folder restricted "
                      "before keeps its readers. The names are the accounts people sign in to their "
                      "computers with; @name is a group of accounts.")
        note.setWordWrap(True)
        note.setStyleSheet("color: palette(placeholder-text);")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.index_button = buttons.addButton("Index", QDialogButtonBox.ButtonRole.AcceptRole)
        self.index_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (intro, who, self.edit, note, buttons):
            layout.addWidget(w)

    def readers(self) -> str | None:
        spec = Readers.parse(self.edit.text()).spec()
        return spec or None
