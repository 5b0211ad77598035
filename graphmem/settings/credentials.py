"""The password of a local server, for a client: where its file is, reading it, and sending it
only to this user's server.

``graphmem db start`` keeps the password of user ``neo4j`` in ``<home>/instances/<port>/password``
(graphmem.server.credentials). A connection whose ``NEO4J_PASSWORD`` is empty reads it there when
its URI names that local port (docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from graphmem.errors import ConfigurationError
from graphmem.settings.config import DEFAULT_BOLT_PORT
from graphmem.settings.trust import trusted, user_name

if TYPE_CHECKING:
    from neo4j import Address

__all__ = ["INSTANCES", "PASSWORD", "listening_users", "local_password", "own_port", "password_file", "read_password"]

INSTANCES = "instances"
"""The folder of the home that holds one folder per local server, named by its port."""
PASSWORD = "password"
"""The file of an instance folder that holds its password."""

_LOCAL_HOSTS = ("127.0.0.1", "localhost")
_TCP_LISTEN = "0A"  # the LISTEN state in /proc/net/tcp


def password_file(uri: str, home: Path) -> Path | None:
    """Where the password of the local server ``uri`` names is kept under ``home``; None unless
    ``uri`` is ``bolt://`` or ``neo4j://`` on 127.0.0.1 or localhost (port 7687 when none is given)."""
    try:
        parts = urlsplit(uri)
        port = parts.port or DEFAULT_BOLT_PORT
    except ValueError:  # a port that is not a number
        return None
    if parts.scheme not in ("bolt", "neo4j") or parts.hostname not in _LOCAL_HOSTS:
        return None
    return home / INSTANCES / str(port) / PASSWORD


def local_password(uri: str, home: Path) -> str | None:
    """The password of the local server ``uri`` names, from its ``password_file`` under ``home``:
    None for any other URI, or when the file is missing or unreadable.

    Raises ConfigurationError when another user could have written or may read the file.

    Example: ``local_password("bolt://127.0.0.1:7688", Path("~/.cache/graphmem").expanduser())``.
    """
    path = password_file(uri, home)
    return read_password(path) if path is not None else None


def read_password(path: Path) -> str | None:
    """The password in ``path``; None when the file is missing, unreadable or empty. A file another
    user could have written or may read is refused (ConfigurationError): they would know the
    password, or have chosen it."""
    try:
        return trusted(path, secret=True).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def listening_users(port: int) -> set[int] | None:
    """The uids of the processes listening on TCP ``port`` of this machine, on any address, IPv4
    or IPv6 (Linux: /proc/net/tcp and tcp6); None where neither can be read."""
    uids: set[int] | None = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        uids = uids or set()
        for row in rows:
            # sl local_address rem_address st ... uid: "0100007F:1E61 00000000:0000 0A ... 0"
            fields = row.split()
            if fields[3] == _TCP_LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                uids.add(int(fields[7]))
    return uids


def own_port(address: Address) -> Iterator[Address]:
    """A driver ``resolver`` for a server whose password comes from an instance folder of this
    user: refuses (ConfigurationError) a port another user's process listens on, before the
    connection opens and the password is sent."""
    others = sorted((listening_users(address.port) or set()) - {os.getuid()})
    if others:
        raise ConfigurationError(
            f"port {address.port} of this machine is held by a process of {', '.join(map(user_name, others))}, "
            "not by your Neo4j: its password is not sent there; stop that process or use another port"
        )
    yield address
