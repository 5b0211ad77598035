"""What the local server launcher asks of this machine: processes, ports, signals and file locks.

Linux's ``/proc`` tells a process's arguments and state; elsewhere those checks answer "cannot tell".
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import socket
import subprocess
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "PRIVATE_UMASK",
    "adopt",
    "alive",
    "cmdline",
    "exit_code",
    "find_process",
    "locked",
    "open_private",
    "port_free",
    "signal_group",
    "wait_gone",
]

PRIVATE_UMASK = 0o077
"""The umask the server and its admin tool run with: what they create (store, transaction logs,
auth.ini, logs) is this user's only, like the instance folder that holds it."""

# Handles of servers this process spawned, by pid. Keeping them (a) lets poll() reap an exited
# child, which os.kill(pid, 0) alone would still report as alive (a zombie), and (b) stops
# Popen.__del__ from warning that a deliberately detached child is "still running".
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_EXIT_CODES: dict[int, int] = {}  # of those children once reaped, for the start-up error message


def adopt(proc: subprocess.Popen[bytes]) -> None:
    """Keep the handle of a server this process spawned and left running (see ``alive``)."""
    _CHILDREN[proc.pid] = proc


def exit_code(pid: int) -> int | None:
    """The exit code of an adopted child found exited by ``alive``, once; None when unknown."""
    return _EXIT_CODES.pop(pid, None)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs: an adopted child is polled (and reaped), any other process
    asked with signal 0, and a zombie counts as gone."""
    proc = _CHILDREN.get(pid)
    if proc is not None:
        if proc.poll() is None:
            return True
        del _CHILDREN[pid]  # reaped; its pid may now be reused by anything
        _EXIT_CODES[pid] = proc.returncode
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    # An exited child of another process that has not reaped it yet still answers kill(0).
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return state.rsplit(")", 1)[-1].split()[0] != "Z"


def cmdline(pid: int) -> list[str] | None:
    """The process's arguments; None where they cannot be read (no /proc, process gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg]


def find_process(marker: str, main_classes: Collection[str]) -> int | None:
    """A live Java process running one of ``main_classes`` with ``marker`` among its arguments."""
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return None
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        args = cmdline(pid)
        if args and marker in args and any(cls in args for cls in main_classes) and alive(pid):
            return pid
    return None


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal ``pid``'s process group when it leads one (so nothing it forked survives), else it alone."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` is gone within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def port_free(port: int) -> bool:
    """Whether 127.0.0.1:<port> can be listened on (SO_REUSEADDR, as the server does, so a
    just-stopped server's TIME_WAIT connections do not count as taken)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock for the duration of the block (released if the process dies)."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def open_private(path: Path) -> BinaryIO:
    """``path`` emptied (or created) for writing, readable by this user only."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")
