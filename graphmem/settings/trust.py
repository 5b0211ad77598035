"""Refusing files and folders that another local user could have changed.

graphmem runs code from its home (Neo4j's jars) and reads model weights and secrets there (an
instance's password, the MCP token): a folder another user can write is one they can plant.
So each is checked before use by one rule (docs/security.md): the path and every folder above it

- belong to you or to root, and
- cannot be written by others, nor by a group with members besides you,

except that a root-owned sticky folder above the path (``/tmp``) may be writable by all, though
never the home itself (another user could make graphmem's folders there first). A secret must
also be unreadable by others. A symbolic link must belong to you or root, and its target is
held to the rule.
"""

from __future__ import annotations

import glob
import grp
import os
import pwd
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from graphmem.errors import ConfigurationError
from graphmem.settings.home import default_home

__all__ = [
    "ABANDONED",
    "HOME_FIX",
    "private_dir",
    "private_file",
    "private_tree",
    "trusted",
    "user_name",
    "write_private",
]

HOME_FIX = "choose a GRAPHMEM_HOME you own"
"""What to do instead when a folder under the home is not yours."""

_TRUSTED_OWNER = 0  # root: it can change anything anyway


def trusted(path: Path, *, secret: bool = False, contents: bool = False, instead: str = HOME_FIX) -> Path:
    """Return ``path`` if nobody but this user (or root) can change it (module docstring); with
    ``secret``, also if no one else can read it; with ``contents``, each entry directly inside
    is held to the same rule. Missing components are skipped: there is nothing in them yet.

    Raises ConfigurationError, one line naming the path and the fix (``chmod ...``, or
    ``instead``, what to use in its place).

    Example: ``trusted(Path("~/.cache/graphmem").expanduser())``.
    """
    path = Path(os.path.abspath(path))
    real = path.resolve()
    home = Path(os.path.abspath(default_home()))
    strict = {path, real, home, home.resolve()}
    for component in dict.fromkeys([path, *path.parents, real, *real.parents]):
        _check(component, leaf=component in strict, instead=instead)
    if secret and real.exists():
        mode = stat.S_IMODE(real.stat().st_mode)
        if mode & 0o077:
            raise ConfigurationError(f"{real} can be read by other users (mode {mode:04o}): chmod go-rwx {real}")
    if contents and real.is_dir():
        for entry in os.scandir(real):
            if entry.is_symlink():
                trusted(Path(entry.path), instead=instead)
            else:
                _judge(Path(entry.path), entry.stat(follow_symlinks=False), leaf=True, instead=instead)
    return path


def private_dir(path: Path) -> Path:
    """Create the folder ``path`` (and any missing folder above it) readable by this user only,
    and return it, if it is ``trusted`` before and after (nothing is created in a folder that is
    not). A folder that exists keeps its mode."""
    path = trusted(path)
    missing = []
    for folder in [path, *path.parents]:
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)  # exist_ok: a concurrent start made it first
    return trusted(path)


#: Seconds a partial file of ``private_file`` must be left untouched to count as abandoned.
ABANDONED = 600


@contextmanager
def private_file(path: Path) -> Iterator[TextIO]:
    """A text file to write that appears as ``path``, mode 0600, once the block ends without error;
    a block cut short leaves nothing.

    - It is written under a name nobody could have planted (``mkstemp``) beside ``path``, then
      renamed onto it: what was there (a link too) is replaced, never written through.
    - A killed writer's partial file is removed by the next writer of ``path`` once untouched
      for ``ABANDONED``.

    Example: ``with private_file(Path("alice.jsonl")) as out: out.write(text)``.
    """
    for left in path.parent.glob(f".{glob.escape(path.name)}.*.partial"):
        info = left.lstat()
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and time.time() - info.st_mtime > ABANDONED:
            left.unlink(missing_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole, readable by this user only (``private_file``)."""
    with private_file(path) as out:
        out.write(text)


def private_tree(folder: Path, *, instead: str = "remove it if you did not put it there") -> Path:
    """``trusted(folder)``, every entry below it held to the same rule (a file another user put
    inside, such as a log configuration a server reads, is as dangerous as the folder), and
    group and other permissions taken off each (a copy of it must not be readable by others).
    Only what still has such bits is changed; links are not followed."""
    trusted(folder)
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = Path(root, name)
            info = os.lstat(path)
            _judge(path, info, leaf=True, instead=instead)
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
                os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
    return folder


def _check(path: Path, *, leaf: bool, instead: str) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigurationError(f"cannot check who may change {path}: {exc.strerror}; {instead}") from None
    _judge(path, info, leaf=leaf, instead=instead)


def _judge(path: Path, info: os.stat_result, *, leaf: bool, instead: str) -> None:
    me = os.geteuid()
    if info.st_uid not in (me, _TRUSTED_OWNER):
        raise ConfigurationError(
            f"{path} belongs to {user_name(info.st_uid)}, not to you or root, so they can "
            f"change what graphmem finds there: {instead}"
        )
    if stat.S_ISLNK(info.st_mode):
        return  # a link's own mode means nothing; its target is checked as the resolved path
    mode = stat.S_IMODE(info.st_mode)
    shared = mode & 0o002 or (mode & 0o020 and not _private_group(info.st_gid, me))
    if shared and not (not leaf and mode & stat.S_ISVTX and info.st_uid == _TRUSTED_OWNER):
        raise ConfigurationError(
            f"{path} can be written by other users (mode {mode:04o}): chmod go-w {path}, or {instead}"
        )


def _private_group(gid: int, uid: int) -> bool:
    """Whether user ``uid`` is the one and only member of group ``gid`` (primary or not)."""
    try:
        group, name = grp.getgrgid(gid), pwd.getpwuid(uid).pw_name
    except KeyError:
        return False
    primary = {user.pw_uid for user in pwd.getpwall() if user.pw_gid == gid}
    members = set(group.gr_mem)
    return primary <= {uid} and members <= {name} and (uid in primary or name in members)


def user_name(uid: int) -> str:
    """How a message names the user ``uid``: "user alice", or "uid 1001" when it has no name."""
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"uid {uid}"
