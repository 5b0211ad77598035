"""graphmem.settings.trust: nobody but this user (or root) may be able to change what graphmem runs,
loads or reads secrets from. The places that apply it are tested with them (test_local_server,
test_embedders, test_cli_serve)."""

from __future__ import annotations

import os
import pwd
import stat
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.errors import ConfigurationError
from graphmem.settings.trust import ABANDONED, private_dir, private_file, private_tree, trusted

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="only root can give a folder to another user or group")

# Owner bits always rwx (so the test can walk the chain); others' write bit and the sticky bit
# vary. Group bits stay 0: whether a group-writable folder is refused depends on who else is in
# the group, tested below.
MODES = st.sampled_from([0o700, 0o711, 0o755, 0o703, 0o757, 0o777, 0o1777, 0o1755, 0o1703])


def _chain(base: Path, modes: list[int]) -> list[Path]:
    folders, path = [], base
    for depth in range(len(modes)):
        path = path / f"d{depth}"
        path.mkdir()
        folders.append(path)
    for folder, mode in zip(folders, modes):
        folder.chmod(mode)
    return folders


@given(modes=st.lists(MODES, min_size=1, max_size=4), file_mode=st.sampled_from([0o600, 0o400, 0o640, 0o604, 0o666]))
def test_a_secret_is_refused_when_others_can_write_it_or_a_folder_above_it_or_read_it(
    tmp_path_factory, modes: list[int], file_mode: int
) -> None:
    """Refused iff the file, or a folder above it that is not a root-owned sticky folder (like
    /tmp), is writable by others, or others can read the file; the error names the deepest
    such path and the fix."""
    folders = _chain(tmp_path_factory.mktemp("chain"), modes)
    secret = folders[-1] / "password"
    secret.write_text("s3cret")
    secret.chmod(file_mode)
    # Every folder here is this user's, so only when that user is root does a sticky bit excuse one.
    writable = [(f, m) for f, m in zip(folders, modes) if m & 0o002 and not (m & stat.S_ISVTX and ROOT)]
    writable += [(secret, file_mode)] if file_mode & 0o002 else []
    if writable:
        worst, mode = writable[-1]
        expected = f"{worst} can be written by other users (mode {mode:04o}): chmod go-w {worst}, or use yours"
    elif file_mode & 0o077:
        expected = f"{secret} can be read by other users (mode {file_mode:04o}): chmod go-rwx {secret}"
    else:
        assert trusted(secret, secret=True, instead="use yours") == secret
        return
    with pytest.raises(ConfigurationError) as refused:
        trusted(secret, secret=True, instead="use yours")
    assert str(refused.value) == expected


def test_contents_are_checked_one_level_down(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    jar = lib / "planted.jar"
    jar.write_bytes(b"PK")
    jar.chmod(0o666)
    assert trusted(lib) == lib
    lib.chmod(0o1777)  # a sticky bit excuses only a root-owned folder above the path, never the path
    with pytest.raises(ConfigurationError, match=f"^{lib} can be written by other users"):
        trusted(lib)
    lib.chmod(0o755)
    with pytest.raises(ConfigurationError, match=f"^{jar} can be written by other users"):
        trusted(lib, contents=True, instead="use another folder")


def test_a_link_is_followed_to_what_it_names(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    link = tmp_path / "home"
    link.symlink_to(shared)
    with pytest.raises(ConfigurationError, match=f"^{shared} can be written by other users"):
        trusted(link / "models")
    shared.chmod(0o755)
    assert trusted(link / "models") == link / "models"  # missing below: nothing to distrust yet


def test_private_dir_creates_owner_only_folders_and_keeps_existing_ones(tmp_path: Path) -> None:
    existing = tmp_path / "home"
    existing.mkdir(mode=0o755)
    existing.chmod(0o755)
    made = private_dir(existing / "neo4j" / "lib")
    assert made == existing / "neo4j" / "lib"
    assert [stat.S_IMODE(p.stat().st_mode) for p in (existing, made.parent, made)] == [0o755, 0o700, 0o700]
    existing.chmod(0o757)
    with pytest.raises(ConfigurationError, match=f"^{existing} can be written by other users"):
        private_dir(existing / "models")
    assert not (existing / "models").exists()  # nothing made in a folder that is refused


@needs_root
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chown(home, nobody, -1)
    with pytest.raises(
        ConfigurationError,
        match=f"^{home} belongs to user nobody, not to you or root, .*: choose a GRAPHMEM_HOME you own$",
    ):
        trusted(home / "instances" / "7687")
    os.chown(home, 0, -1)
    assert trusted(home / "instances" / "7687")


@needs_root
def test_group_write_is_refused_unless_the_group_is_this_user_alone(tmp_path: Path) -> None:
    """A user private group (umask 002 on Debian) is one person; any other group is not."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o770)
    me = pwd.getpwuid(os.geteuid())
    others = next(user.pw_gid for user in pwd.getpwall() if user.pw_uid != me.pw_uid and user.pw_gid != me.pw_gid)
    os.chown(home, -1, others)
    with pytest.raises(ConfigurationError, match=f"^{home} can be written by other users \\(mode 0770\\)"):
        trusted(home)
    if not any(user.pw_gid == me.pw_gid and user.pw_uid != me.pw_uid for user in pwd.getpwall()):
        os.chown(home, -1, me.pw_gid)
        assert trusted(home) == home


def test_a_sticky_folder_open_to_all_is_never_the_home(tmp_path: Path, monkeypatch) -> None:
    """Above the home a sticky folder open to all (like /tmp) is fine, if root's; the home itself
    is not: another user could make the folders graphmem makes in it first."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("GRAPHMEM_HOME", str(shared))
    with pytest.raises(ConfigurationError, match=f"^{shared} can be written by other users \\(mode 1777\\)"):
        trusted(shared / "instances" / "7687")
    monkeypatch.setenv("GRAPHMEM_HOME", str(shared / "mine"))
    (shared / "mine").mkdir(mode=0o700)
    expected = shared / "mine" / "instances"
    if ROOT:  # only root's sticky folders excuse them
        assert trusted(expected) == expected


def test_private_tree_takes_others_bits_off_what_is_inside(tmp_path: Path) -> None:
    instance = tmp_path / "7687"
    (instance / "data").mkdir(parents=True)
    (instance / "data" / "store").write_text("x")
    (instance / "data" / "store").chmod(0o644)
    (instance / "data").chmod(0o755)
    assert private_tree(instance) == instance
    assert stat.S_IMODE((instance / "data").stat().st_mode) == 0o700
    assert stat.S_IMODE((instance / "data" / "store").stat().st_mode) == 0o600
    (instance / "conf").mkdir()
    (instance / "conf").chmod(0o777)
    with pytest.raises(ConfigurationError, match=f"^{instance / 'conf'} can be written by other users"):
        private_tree(instance)


@needs_root
def test_a_file_another_user_put_inside_an_instance_is_refused(tmp_path: Path) -> None:
    """A planted log configuration would have a server started by this user write where
    another user chose."""
    instance = tmp_path / "7687"
    (instance / "conf").mkdir(parents=True)
    planted = instance / "conf" / "server-logs.xml"
    planted.write_text("<Configuration/>")
    os.chown(planted, pwd.getpwnam("nobody").pw_uid, -1)
    with pytest.raises(
        ConfigurationError,
        match=f"^{planted} belongs to user nobody, not to you or root, .*: remove it if you did not put it there$",
    ):
        private_tree(instance)
    planted.unlink()
    assert private_tree(instance) == instance


def test_private_file_is_written_whole_readable_by_this_user_only(tmp_path: Path) -> None:
    out = tmp_path / "alice.jsonl"
    out.write_text("an older export\n")
    out.chmod(0o644)
    with private_file(out) as handle:
        handle.write('{"type": "header"}\n')
        assert out.read_text() == "an older export\n"  # under its name only once complete
    assert out.read_text() == '{"type": "header"}\n'
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["alice.jsonl"]


def test_private_file_removes_the_partial_files_a_killed_writer_left(tmp_path: Path) -> None:
    """A kill -9 leaves the partial file (memory text, mode 0600) behind: the next write of the
    same file removes those untouched for ABANDONED seconds, not one a writer is still at."""
    out = tmp_path / "alice[1].jsonl"  # a name with glob characters
    left, busy, other = (tmp_path / f".alice[1].jsonl.{n}.partial" for n in ("old", "busy", "x"))
    for path in (left, busy):
        path.write_text("text of a killed export\n")
    other_name = tmp_path / ".bob.jsonl.old.partial"
    other_name.write_text("another file's\n")
    stale = time.time() - ABANDONED - 60
    os.utime(left, (stale, stale))
    os.utime(other_name, (stale, stale))
    with private_file(out) as handle:
        handle.write("new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, busy.name, other_name.name])
    assert not other.exists()


def test_private_file_never_writes_through_a_planted_name(tmp_path: Path) -> None:
    """Another user's file where a temporary name would be, or a link in its place or the
    target's, is never written: the temporary file is new (O_EXCL), the target replaced."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    planted = tmp_path / "x.jsonl.partial"
    planted.write_text("")
    planted.chmod(0o666)
    (tmp_path / "y.jsonl.partial").symlink_to(victim)
    (tmp_path / "y.jsonl").symlink_to(victim)
    for name in ("x.jsonl", "y.jsonl"):
        with private_file(tmp_path / name) as handle:
            handle.write("export\n")
        made = tmp_path / name
        assert not made.is_symlink() and made.read_text() == "export\n"
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert victim.read_text() == "precious\n" and planted.read_text() == ""


def test_private_file_cut_short_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "alice.jsonl"
    with pytest.raises(KeyboardInterrupt), private_file(out) as handle:
        handle.write("half\n")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
