"""Who may read what in a team library: the one rule every search of a team library applies.

A folder added to a team library is open to everyone, or restricted to some users and groups
(`Readers`). The person asking is an `Identity`: a user name and the groups it belongs to, from
the desktop's OS account (`Identity.from_os`), or nobody (`Identity.anonymous`), who reads only
what is open to everyone.

The rule has two forms that must agree, and both live here:
- `Readers.allows(identity)`, in Python, for the files a desktop holds in its cache;
- `Identity.where()`, a Chroma `where` filter over the keys `Readers.keys()` writes into the
  metadata of every passage and file record on the server, so the server leaves out what the
  identity may not read before it ranks anything.
`store/team.py` is the only user of both (docs/team-libraries.md).
"""

from __future__ import annotations

import getpass
import logging
import os
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

OPEN_KEY = "open"  # a passage or file record anyone may read
_USER = "r:u:"  # metadata key prefixes: "r:u:alice", "r:g:engineering"
_GROUP = "r:g:"


@dataclass(frozen=True)
class Identity:
    """The person asking. `user` None: unauthenticated, reads only what is open to everyone."""

    user: str | None = None
    groups: frozenset[str] = field(default_factory=frozenset)

    @staticmethod
    def anonymous() -> "Identity":
        return Identity(None, frozenset())

    @staticmethod
    def from_os() -> "Identity":
        """The OS account running EdgeChat and its groups (POSIX group names; none on Windows).
        An account whose name cannot be read is unauthenticated."""
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001 - no name: reads what is open to everyone
            log.warning("the OS account's name cannot be read: the team library shows what is open to everyone")
            return Identity.anonymous()
        groups: set[str] = set()
        try:
            import grp

            for gid in os.getgroups():
                try:
                    groups.add(grp.getgrgid(gid).gr_name)
                except KeyError:
                    continue
        except ImportError:  # Windows: no POSIX groups
            pass
        return Identity(user, frozenset(groups))

    def keys(self) -> list[str]:
        """The metadata keys of what this identity may read besides what is open."""
        if self.user is None:
            return []
        return [_USER + self.user, *(_GROUP + g for g in sorted(self.groups))]

    def where(self) -> dict[str, Any]:
        """A Chroma `where` filter: the records this identity may read."""
        clauses: list[dict[str, Any]] = [{OPEN_KEY: True}, *({k: True} for k in self.keys())]
        return clauses[0] if len(clauses) == 1 else {"$or": clauses}

    def __str__(self) -> str:
        if self.user is None:
            return "nobody (unauthenticated)"
        return self.user + (f" (groups {', '.join(sorted(self.groups))})" if self.groups else "")


@dataclass(frozen=True)
class Readers:
    """Who may read a folder: everyone (both sets empty), or these users and groups."""

    users: frozenset[str] = field(default_factory=frozenset)
    groups: frozenset[str] = field(default_factory=frozenset)

    @staticmethod
    def everyone() -> "Readers":
        return Readers()

    @staticmethod
    def parse(spec: str | None) -> "Readers":
        """"alice,bob,@engineering": users alice and bob and the group engineering; "" or None:
        everyone."""
        users: set[str] = set()
        groups: set[str] = set()
        for part in (spec or "").split(","):
            part = part.strip()
            if not part:
                continue
            if part.startswith("@"):
                if len(part) > 1:
                    groups.add(part[1:])
            else:
                users.add(part)
        return Readers(frozenset(users), frozenset(groups))

    @property
    def is_open(self) -> bool:
        return not self.users and not self.groups

    def spec(self) -> str:
        """The inverse of parse: "" for everyone."""
        return ",".join([*sorted(self.users), *("@" + g for g in sorted(self.groups))])

    def allows(self, identity: Identity) -> bool:
        if self.is_open:
            return True
        if identity.user is None:
            return False
        return identity.user in self.users or bool(identity.groups & self.groups)

    def keys(self) -> dict[str, bool]:
        """The metadata this writes on every record of the folder, for Identity.where()."""
        if self.is_open:
            return {OPEN_KEY: True}
        return {**{_USER + u: True for u in self.users}, **{_GROUP + g: True for g in self.groups}}
