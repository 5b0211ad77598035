"""LocalNeo4j: real servers (one shared throwaway server, plus one instance upgraded from the
release that ran without authentication), and unit tests that need no server.

Real servers run on the jars already provisioned under the default home (so they download
nothing when `graphmem db start` has run), in temporary instance folders, on ports from
tests.ports.free_port.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ClientError
from typer.testing import CliRunner

import graphmem.server.java as java_mod
from graphmem.adapters.neo4j.admin import flush_erased
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.cli.db import app
from graphmem.errors import BackendError, ConfigurationError, Unavailable
from graphmem.server import LocalNeo4j, conf, host, local_password, logs, provision
from graphmem.server.credentials import ADMIN_CLASS
from graphmem.server.java import Java
from graphmem.settings.config import Settings
from graphmem.settings.home import default_home
from tests.ports import free_port


def _fake_java(folder: Path, version: str, run_body: str = "exit 1") -> Path:
    """A JDK folder whose bin/java answers -version with ``version`` and otherwise runs ``run_body``."""
    (folder / "bin").mkdir(parents=True)
    java = folder / "bin" / "java"
    java.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-version" ]; then\n'
        f"  echo 'openjdk version \"{version}\" 2024-01-16' >&2\n"
        "  exit 0\n"
        "fi\n"
        f"{run_body}\n"
    )
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return folder


def _only_javas(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *versions: str, home: str | None = None) -> Path:
    """Make the fake JDKs ``versions`` (under a fake JVM folder) the only Javas found, with
    ``$JAVA_HOME`` a fake JDK of version ``home`` outside that folder, or unset."""
    jvm = tmp_path / "jvm"
    jvm.mkdir()
    for version in versions:
        _fake_java(jvm / f"jdk-{version}", version)
    monkeypatch.setattr(java_mod, "JVM_DIR", jvm)
    _no_tools(monkeypatch, "java")
    if home is None:
        monkeypatch.delenv("JAVA_HOME", raising=False)
    else:
        monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path / "java-home", home)))
    return jvm


def _fake_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str, server_body: str, on_admin: str = ""
) -> LocalNeo4j:
    """A LocalNeo4j of ``version`` that looks provisioned (no Maven here), run by a stand-in
    java: the admin tool call (``java @argfile``) runs ``on_admin`` and writes auth.ini as
    Neo4j's would; the server call runs ``server_body``."""
    body = (
        f'case "$1" in @*) {on_admin} mkdir -p "$NEO4J_HOME/data/dbms"; '
        'touch "$NEO4J_HOME/data/dbms/auth.ini"; exit 0;; esac\n' + server_body
    )
    _only_javas(monkeypatch, tmp_path)
    java_version = "21.0.2" if version == provision.LATEST else "17.0.15"
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path / "jdk", java_version, body)))
    server = LocalNeo4j(home=tmp_path / "home", port=free_port(), version=version)
    server.jars.lib_dir.mkdir(parents=True)
    (server.jars.dist_dir / ".provisioned").write_text("{}\n")
    return server


def _no_tools(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name in missing else real_which(name, *a, **k))


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()  # reaped: the pid names no process now
    return proc.pid


def _run(server: LocalNeo4j, query: str, auth: tuple[str, str] | None = None, **params: object) -> list[dict]:
    with GraphDatabase.driver(server.uri, auth=auth or ("neo4j", server.password or "")) as driver:
        records, _, _ = driver.execute_query(query, params)
        return [record.data() for record in records]


def _skip_without_java(version: str) -> None:
    try:
        provision.find_java(version)
    except ConfigurationError as exc:
        pytest.skip(str(exc))


# ------------------------------------------------------------------------------- real server


@pytest.fixture(scope="module")
def throwaway(tmp_path_factory) -> LocalNeo4j:
    """One server for the real-server tests below; its instances folder is ``<home>/instances``
    of a temporary home, so ``Settings(home=that home)`` finds its password. Its password is
    one a user chose before the first start, and starts with "-" (which Neo4j's admin tool
    would read as an option)."""
    home = tmp_path_factory.mktemp("home")
    server = LocalNeo4j(
        home=default_home(),  # shared jars: provisioned once, by whoever starts first
        instances_dir=home / "instances",
        port=free_port(),
        heap="512m",
        pagecache="128m",
    )
    _skip_without_java(server.version)
    server.password_file.parent.mkdir(parents=True)
    server.password_file.write_text("-" + secrets.token_hex(16) + "\n")
    server.start(wait_seconds=180)
    yield server
    server.stop(timeout=20)


def _settings_for(server: LocalNeo4j, password: str = "") -> Settings:
    return Settings(neo4j_uri=server.uri, neo4j_password=password, home=server.instance_dir.parent.parent)


@pytest.mark.neo4j
def test_connections_need_the_password_file_s_password(throwaway: LocalNeo4j, tmp_path: Path) -> None:
    assert _run(throwaway, "RETURN 1 AS one") == [{"one": 1}]
    # The library finds the password by itself for a local URI when NEO4J_PASSWORD is empty.
    with Neo4jConnection(_settings_for(throwaway)) as conn:
        assert conn.server_version()[0] == throwaway.status().version
    elsewhere = Settings(neo4j_uri=throwaway.uri, home=tmp_path)  # another home: no password file there
    with Neo4jConnection(elsewhere) as conn, pytest.raises(Unavailable) as refused:
        conn.server_version()
    missing = tmp_path / "instances" / str(throwaway.port) / "password"
    assert str(refused.value) == (
        f"Neo4j at {throwaway.uri} asks for a password and {missing} does not exist (a server started "
        "with another GRAPHMEM_HOME?): set GRAPHMEM_HOME to its home, or NEO4J_PASSWORD"
    )
    with Neo4jConnection(_settings_for(throwaway, password="not-the-password")) as conn:
        for _ in range(5):
            with pytest.raises(
                Unavailable,
                match=r"refused the user and password given \(--user/--password or "
                r"NEO4J_USER/NEO4J_PASSWORD\): correct them",
            ):
                conn.server_version()
    # Refused logins in a row (another local user's, say) do not lock the owner out.
    with Neo4jConnection(_settings_for(throwaway)) as conn:
        assert conn.server_version()[0] == throwaway.status().version


@pytest.mark.neo4j
def test_password_file_and_instance_folder_are_private(throwaway: LocalNeo4j) -> None:
    assert stat.S_IMODE(throwaway.password_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(throwaway.instance_dir.stat().st_mode) == 0o700
    assert throwaway.status().password_file == str(throwaway.password_file)
    assert len(throwaway.password or "") >= 24


def _open_to_others(folder: Path) -> list[str]:
    """What under ``folder`` (itself included) its group or other users may read, write or enter."""
    return [
        f"{path} {stat.S_IMODE(path.lstat().st_mode):04o}"
        for path in [folder, *folder.rglob("*")]
        if not path.is_symlink() and path.lstat().st_mode & 0o077
    ]


@pytest.mark.neo4j
def test_what_the_server_writes_is_readable_by_this_user_only(throwaway: LocalNeo4j) -> None:
    """A copy of the store or the logs gives no one else the memory: the server runs with umask
    077, so what it creates after start (a write, an index's files) is private too."""
    _run(throwaway, "CREATE (:Private {text: 'only mine'})")
    _run(throwaway, "CREATE FULLTEXT INDEX private_text IF NOT EXISTS FOR (n:Private) ON EACH [n.text]")
    _run(throwaway, "CALL db.awaitIndexes(60)")
    assert _open_to_others(throwaway.instance_dir) == []


@pytest.mark.neo4j
@pytest.mark.parametrize("url", ["file:///etc/passwd", "file:///conf/neo4j.conf", "http://127.0.0.1:{port}/"])
def test_load_csv_reads_no_file_and_fetches_no_url(throwaway: LocalNeo4j, url: str) -> None:
    # Without the blocklist, the http URL (the server's own Bolt port) loads without error.
    with pytest.raises(ClientError) as refused:
        _run(throwaway, "LOAD CSV FROM $url AS line RETURN line LIMIT 1", url=url.format(port=throwaway.port))
    assert refused.value.code == "Neo.ClientError.Statement.ExternalResourceFailed"


@pytest.mark.neo4j
def test_flush_erased_prunes_erased_text_from_the_transaction_logs(throwaway: LocalNeo4j) -> None:
    secret = f"erase-me-{time.time_ns()}: a value long enough to be stored as plain UTF-8 text"
    logs = throwaway.instance_dir / "data" / "transactions"

    def in_logs() -> bool:
        return any(secret.encode() in path.read_bytes() for path in logs.rglob("*.db*"))

    _run(throwaway, "CREATE (:Secret {text: $text})", text=secret)
    _run(throwaway, "MATCH (s:Secret {text: $text}) DELETE s", text=secret)
    assert in_logs()  # the deletion alone leaves it there
    with Neo4jConnection(_settings_for(throwaway)) as conn:
        # Community: no db.checkpoint(), the schedule prunes.
        assert flush_erased(conn, conf.TX_LOG_ROTATION_KIB) is False
    deadline = time.monotonic() + 40  # a checkpoint follows a write within ~10 s
    while in_logs():
        assert time.monotonic() < deadline, "the erased text is still in the transaction logs"
        time.sleep(1)


@pytest.mark.neo4j
def test_start_status_stop_cycle(throwaway: LocalNeo4j) -> None:
    status = throwaway.status()
    assert status.running and status.version == throwaway.version
    assert status.uri == throwaway.uri == f"bolt://127.0.0.1:{throwaway.port}"
    assert status.pid is not None and throwaway.pid_file.read_text().strip() == str(status.pid)
    assert f"127.0.0.1:{throwaway.port}" in throwaway.conf_file.read_text()
    assert (throwaway.instance_dir / "store-version").read_text().strip() == throwaway.version

    again = throwaway.start()
    assert again.running and again.pid == status.pid
    _run(throwaway, "CREATE (:Marker)")
    with pytest.raises(ConfigurationError, match="stop it before a fresh start"):
        throwaway.start(fresh=True)

    assert throwaway.stop() is True
    after = throwaway.status()
    assert after.running is False and after.pid is None
    assert after.password_file == str(throwaway.password_file)
    assert not throwaway.pid_file.exists()
    assert throwaway.stop() is False

    # A fresh start empties the store the previous run left behind; the password stays.
    password = throwaway.password
    throwaway.start(wait_seconds=180, fresh=True)
    assert throwaway.password == password
    assert _run(throwaway, "MATCH (m:Marker) RETURN count(m) AS n") == [{"n": 0}]


@pytest.mark.neo4j
def test_instance_from_the_release_without_auth_gets_a_password_and_keeps_its_data(tmp_path: Path) -> None:
    """The earlier graphmem ran 5.26 with authentication off: start such an instance the way it
    did, then start it with this one (on 2026.x where a Java 21+ is installed)."""
    old = LocalNeo4j(
        home=default_home(),
        instances_dir=tmp_path,
        port=free_port(),
        version=provision.FALLBACK,
        heap="512m",
        pagecache="128m",
    )
    _skip_without_java(old.version)
    old.jars.provision()
    for sub in ("conf", "data", "logs", "run"):
        (old.instance_dir / sub).mkdir(parents=True, exist_ok=True)
    old.conf_file.write_text(old.config_text().replace("auth_enabled=true", "auth_enabled=false"))
    with open(old.console_log, "wb") as console:
        proc = subprocess.Popen(
            old.java_command(provision.find_java(old.version).path),
            stdout=console,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        with GraphDatabase.driver(old.uri, auth=None) as driver:
            while True:
                try:
                    driver.execute_query("CREATE (:Kept {name: 'from 5.26'})")
                    break
                except Exception:
                    assert proc.poll() is None and time.monotonic() < deadline, old.console_log.read_text()[-2000:]
                    time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    assert old.password is None

    notes: list[str] = []
    new = LocalNeo4j(home=default_home(), instances_dir=tmp_path, port=old.port, heap="512m", pagecache="128m")
    try:
        new.start(wait_seconds=180, progress=notes.append)
        with GraphDatabase.driver(new.uri, auth=None) as driver, pytest.raises(AuthError):
            driver.verify_connectivity()
        assert _run(new, "MATCH (k:Kept) RETURN k.name AS name") == [{"name": "from 5.26"}]
        assert stat.S_IMODE(new.password_file.stat().st_mode) == 0o600
        assert new.status().version == new.version
        if new.version == provision.FALLBACK:
            return  # no Java 21+ here: same version, nothing upgraded
        assert any(
            note.startswith(f"upgrading this instance's store from Neo4j {provision.FALLBACK}") for note in notes
        )
        _run(new, "CREATE (:Kept {name: 'from 2026'})")  # the first write upgrades the database
    finally:
        new.stop(timeout=30)
    # ...after which 5.26 could no longer open it: refused before anything runs.
    with pytest.raises(
        ConfigurationError, match=f"written by Neo4j {new.version}, which {provision.FALLBACK} cannot open"
    ):
        old.start(wait_seconds=30)


def _admin(server: LocalNeo4j, *args: str) -> subprocess.CompletedProcess:
    """``bin/neo4j-admin ARGS`` of ``server``'s distribution on its instance (the tarball's
    script runs this class on the same jars)."""
    java = provision.find_java(server.version).path
    env = {**os.environ, "NEO4J_HOME": str(server.instance_dir), "NEO4J_CONF": str(server.conf_file.parent)}
    return subprocess.run(
        [java, "-cp", f"{server.jars.lib_dir}/*", ADMIN_CLASS, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.neo4j
@pytest.mark.slow
def test_a_store_moves_from_5_26_to_2026_by_neo4j_s_own_migration_with_every_answer(tmp_path: Path) -> None:
    """docs/operations.md "Upgrading": a store graphmem wrote on Neo4j 5.26, stopped, migrated with the 2026
    distribution's `neo4j-admin database migrate`, then started on 2026 gives the same answers."""
    from graphmem import GraphMem
    from graphmem.domain.models import Fact

    old = LocalNeo4j(
        home=default_home(),
        instances_dir=tmp_path,
        port=free_port(),
        version=provision.FALLBACK,
        heap="512m",
        pagecache="128m",
    )
    new = LocalNeo4j(
        home=default_home(),
        instances_dir=tmp_path,
        port=old.port,
        version=provision.LATEST,
        heap="512m",
        pagecache="128m",
    )
    _skip_without_java(old.version)
    _skip_without_java(new.version)

    def moved(year: int, city: str) -> Fact:
        return Fact(
            subject="Alice",
            predicate="lives_in",
            object=city,
            content=f"Alice lives in {city}",
            valid_at=datetime(year, 1, 1, tzinfo=UTC),
            single_valued=True,
        )

    def answers(mem: GraphMem) -> dict:
        def contents(**options) -> list[str]:
            return sorted(
                h.unit.content
                for h in mem.recall("where does Alice live, what does she like", "user:alice", k=20, **options)
            )

        return {
            "now": contents(),
            "lexical": contents(mode="lexical"),
            "as_of": [contents(as_of=datetime(year, 6, 1, tzinfo=UTC)) for year in (2019, 2020, 2022)],
            "history": [
                (e["unit"].content, e["unit"].time.valid_at, e["unit"].time.invalid_at)
                for e in mem.history("user:alice", entity="Alice", include_expired=True)
            ],
            "blocks": [(b.label, b.value) for b in mem.list_blocks("user:alice")],
        }

    old.start(wait_seconds=180)
    try:
        with GraphMem.connect(
            Settings(neo4j_uri=old.uri, neo4j_password=old.password or "", embedder="hashing")
        ) as mem:
            day = datetime(2021, 1, 1, tzinfo=UTC)
            mem.remember("I live in Paris.", "user:alice", day, facts=[moved(2019, "Paris")])
            mem.remember("I moved to Berlin.", "user:alice", day, facts=[moved(2021, "Berlin")])
            mem.remember(
                "I like tea.",
                "user:alice",
                day,
                facts=[Fact(subject="Alice", predicate="likes", object="tea", content="Alice likes tea")],
            )
            mem.set_block("user:alice", "persona", "Alice is an engineer.", token_budget=20)
            before = answers(mem)
    finally:
        old.stop(timeout=60)
    assert before["now"] == ["Alice likes tea", "Alice lives in Berlin"]

    new.jars.provision()
    new.conf_file.write_text(new.config_text())  # the 2026 distribution reads its own settings
    migrated = _admin(new, "database", "migrate", "neo4j")
    assert migrated.returncode == 0 and "Database migration completed successfully" in migrated.stdout, (
        migrated.stdout + migrated.stderr
    )
    new.start(wait_seconds=180)
    try:
        settings = Settings(neo4j_uri=new.uri, neo4j_password=new.password or "", embedder="hashing")
        with GraphMem.connect(settings, migrate=False, check_index=False) as mem:
            assert new.status().version == provision.LATEST
            [indexes] = [c for c in mem.doctor()["checks"] if c["check"] == "indexes"]
            assert not indexes["ok"] and "without the filter properties" in indexes["detail"]
            mem.init()  # `graphmem init`
            assert answers(mem) == before
            doctor = mem.doctor()
            assert doctor["ok"], doctor["checks"]
    finally:
        new.stop(timeout=60)


# ------------------------------------------------------------------------------- the port's owner

# Listens on the port given as argv[1], says "ready", then says how many bytes the first
# connection sent within three seconds ("none" if no connection came).
_LISTENER = """
import socket, sys
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen()
print("ready", flush=True)
sock.settimeout(3)
try:
    conn, _ = sock.accept()
except socket.timeout:
    print("none", flush=True)
else:
    conn.settimeout(3)
    data = conn.recv(20)  # the Bolt handshake
    conn.sendall(bytes.fromhex("00000106"))  # agrees to Bolt 6.1, so a client goes on to log in
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except OSError:
        pass
    print(len(data), flush=True)
"""


# The system's Python: user nobody may run it, not necessarily this virtualenv's.
_SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")


@pytest.mark.skipif(os.geteuid() != 0 or _SYSTEM_PYTHON is None, reason="listening as another user needs root")
def test_the_password_of_a_local_server_goes_to_no_other_user_s_listener(tmp_path: Path) -> None:
    """Another local user who holds the port of this user's server (taken while the server was
    down) is sent nothing: the connection that would carry the password is not opened."""
    port = free_port()
    password_file = tmp_path / "instances" / str(port) / "password"
    password_file.parent.mkdir(parents=True, mode=0o700)
    password_file.write_text(secrets.token_hex(16) + "\n")
    password_file.chmod(0o600)
    listener = subprocess.Popen(
        [_SYSTEM_PYTHON, "-c", _LISTENER, str(port)], user="nobody", stdout=subprocess.PIPE, text=True
    )
    try:
        assert listener.stdout.readline().strip() == "ready"
        settings = Settings(neo4j_uri=f"bolt://127.0.0.1:{port}", home=tmp_path)
        with Neo4jConnection(settings) as conn, pytest.raises(ConfigurationError) as refused:
            conn.server_version()
        assert str(refused.value) == (
            f"port {port} of this machine is held by a process of user nobody, not by "
            "your Neo4j: its password is not sent there; stop that process or use another port"
        )
        assert listener.stdout.readline().strip() == "none"
    finally:
        listener.kill()
        listener.wait()


# ------------------------------------------------------------------------------- Java and versions


def test_javas_are_found_in_java_home_the_jvm_folder_and_path_each_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jvm = _only_javas(monkeypatch, tmp_path, "17.0.15", "25.0.3", home="21.0.2")
    (jvm / "java-1.17-alias").symlink_to(jvm / "jdk-17.0.15")  # Debian keeps such aliases
    (jvm / "not-a-jdk").mkdir()
    path_java = tmp_path / "bin" / "java"
    path_java.parent.mkdir()
    path_java.symlink_to(jvm / "jdk-25.0.3" / "bin" / "java")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: str(path_java) if name == "java" else None)
    found = java_mod.installed_javas()
    assert [java.major for java in found] == [21, 17, 25]
    assert found[0].path == str(tmp_path / "java-home" / "bin" / "java")


javas = st.lists(st.sampled_from([8, 11, 17, 21, 22, 25]), max_size=4).map(
    lambda majors: [Java(f"/jvm/{i}/bin/java", major) for i, major in enumerate(majors)]
)


@given(javas=javas, home_index=st.integers(-1, 3), forced=st.sampled_from([None, provision.LATEST, provision.FALLBACK]))
def test_version_and_java_selection(javas: list[Java], home_index: int, forced: str | None) -> None:
    """LATEST iff a Java 21+ is installed; the Java is $JAVA_HOME's when the version runs on it,
    else the newest it runs on; no fitting Java is a one-line ConfigurationError."""
    home = javas[home_index] if 0 <= home_index < len(javas) else None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(provision, "installed_javas", lambda: javas)
        if home is None:
            mp.delenv("JAVA_HOME", raising=False)
        else:
            mp.setenv("JAVA_HOME", str(Path(home.path).parent.parent))
        version = forced or provision.default_version()
        assert (version == provision.LATEST) == (
            forced == provision.LATEST or (forced is None and any(j.major >= 21 for j in javas))
        )
        low, high = (21, 99) if version == provision.LATEST else (17, 21)
        fitting = [j for j in javas if low <= j.major <= high]
        if not fitting:
            with pytest.raises(ConfigurationError) as refused:
                provision.find_java(version)
            assert "\n" not in str(refused.value)
            return
        chosen = provision.find_java(version)
        if home in fitting:
            assert chosen == home
        else:
            assert chosen in fitting and chosen.major == max(j.major for j in fitting)


def test_missing_java_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _only_javas(monkeypatch, tmp_path)
    with pytest.raises(ConfigurationError, match=r"^Java 17\+ not found: install Java 21\+ \(runs Neo4j 2026"):
        LocalNeo4j(home=tmp_path / "home").jars.provision()


def test_old_java_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _only_javas(monkeypatch, tmp_path, home="11.0.22")
    with pytest.raises(ConfigurationError, match=r"Java 17\+ not found.*is Java 11"):
        LocalNeo4j(home=tmp_path / "home").jars.provision()


def test_version_follows_the_javas_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _only_javas(monkeypatch, tmp_path, "17.0.15")
    server = LocalNeo4j(home=tmp_path / "home")
    assert server.version == provision.FALLBACK
    assert "org.neo4j.server.CommunityEntryPoint" in server.java_command("java")
    with pytest.raises(ConfigurationError, match=r"^Neo4j 2026\.02\.2 needs Java 21\+; found Java 17"):
        LocalNeo4j(home=tmp_path / "home", version=provision.LATEST).jars.provision()


def test_latest_runs_through_its_own_entry_point(tmp_path: Path) -> None:
    command = LocalNeo4j(home=tmp_path, version=provision.LATEST).java_command("java")
    assert "org.neo4j.server.Neo4jCommunity" in command
    assert "org.neo4j.server.CommunityEntryPoint" not in command


def test_java_version_parsing() -> None:
    assert java_mod.java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert java_mod.java_major('java version "21" 2023-09-19') == 21
    assert java_mod.java_major('java version "1.8.0_392"') == 8
    assert java_mod.java_major("no version here") is None


def test_versions_are_validated() -> None:
    for good in ("5.26.30", "2026.02.2", "2025.10.1"):
        assert LocalNeo4j(version=good).version == good
    for bad in ("4.4.1", "2026.2.2", "latest", "5.26"):
        with pytest.raises(ValueError):
            LocalNeo4j(version=bad)


def test_a_newer_store_is_refused_before_anything_runs(tmp_path: Path) -> None:
    server = LocalNeo4j(home=tmp_path, port=free_port(), version=provision.FALLBACK)
    (server.instance_dir / "data" / "databases").mkdir(parents=True)
    (server.instance_dir / "store-version").write_text("2026.02.2\n")
    with pytest.raises(ConfigurationError, match=r"written by Neo4j 2026\.02\.2, which 5\.26\.30 cannot open"):
        server.start(wait_seconds=5)
    assert not server.jars.dist_dir.exists()  # refused before provisioning
    assert server.status().version == "2026.02.2"  # the instance's version, not the one refused


def test_password_never_reaches_a_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls, copy = tmp_path / "calls.log", tmp_path / "argfile.copy"
    server = _fake_install(
        monkeypatch,
        tmp_path,
        provision.LATEST,
        on_admin=f'echo "$*" >> {calls}; cat "${{1#@}}" >> {copy};',
        server_body=f'echo "$*" >> {calls}\nexit 3',
    )
    with pytest.raises(BackendError, match="exited during start-up"):
        server.start(wait_seconds=30)
    password = server.password
    assert password and stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
    assert password in copy.read_text()  # the admin tool got it...
    assert calls.read_text().count("\n") == 2 and password not in calls.read_text()  # ...not on a command line
    assert not list(server.instance_dir.glob("*.args"))  # and the file is gone


def test_start_makes_what_the_instance_holds_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files an earlier start left readable (0644, in 0755 folders) are made this user's only,
    and the admin tool and the server create theirs private (the stand-in java touches files)."""
    server = _fake_install(
        monkeypatch,
        tmp_path,
        provision.LATEST,
        server_body="mkdir -p data/made && touch data/made/by-server logs/debug.log\nexit 3",
    )
    for sub in ("conf", "data/databases/neo4j", "logs", "run"):
        (server.instance_dir / sub).mkdir(mode=0o755, parents=True)
    for old in ("data/databases/neo4j/neostore", "logs/console.log", "conf/neo4j.conf", "store-version"):
        (server.instance_dir / old).write_text("from an earlier start")
        (server.instance_dir / old).chmod(0o644)
    (server.instance_dir / "store-version").write_text(f"{server.version}\n")
    with pytest.raises(BackendError, match="exited during start-up"):
        server.start(wait_seconds=30)
    assert (server.instance_dir / "data" / "made" / "by-server").is_file()
    assert (server.instance_dir / "data" / "dbms" / "auth.ini").is_file()
    assert _open_to_others(server.instance_dir) == []


@pytest.mark.parametrize("planted", ["home", "dist", "lib", "jar", "instances", "instance"])
@pytest.mark.parametrize(
    "how",
    [
        "writable",
        pytest.param(
            "owned", marks=pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
        ),
    ],
)
def test_a_home_another_user_could_plant_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str, how: str
) -> None:
    """Jars another user could replace would run as this user, and an instance folder they
    could write holds the password: start refuses, in one line, before any java runs."""
    ran = tmp_path / "ran"
    server = _fake_install(
        monkeypatch, tmp_path, provision.LATEST, on_admin=f"touch {ran};", server_body=f"touch {ran}\nexit 3"
    )
    jar = server.jars.lib_dir / "neo4j-kernel.jar"
    jar.write_bytes(b"PK")
    server.instance_dir.mkdir(parents=True)
    path = {
        "home": server.home,
        "dist": server.jars.dist_dir,
        "lib": server.jars.lib_dir,
        "jar": jar,
        "instances": server.instance_dir.parent,
        "instance": server.instance_dir,
    }[planted]
    if how == "writable":
        path.chmod(0o777 if path.is_dir() else 0o666)
        fix = f"can be written by other users \\(mode 0{'777' if path.is_dir() else '666'}\\): chmod go-w {path}, or "
    else:
        os.chown(path, 65534, -1)
        fix = "belongs to (user nobody|uid 65534), not to you or root, .*: "
    with pytest.raises(ConfigurationError, match=f"^{path} {fix}choose a GRAPHMEM_HOME you own$"):
        server.start(wait_seconds=30)
    assert not ran.exists()


# ------------------------------------------------------------------------------- local_password


@given(
    scheme=st.sampled_from(["bolt", "neo4j", "neo4j+s", "bolt+ssc", "http"]),
    host=st.sampled_from(["127.0.0.1", "localhost", "example.com", "10.0.0.1"]),
    port=st.one_of(st.none(), st.integers(1, 65535)),
)
def test_local_password_only_for_local_bolt_uris(tmp_path_factory, scheme: str, host: str, port: int | None) -> None:
    home = tmp_path_factory.mktemp("home")
    folder = home / "instances" / str(port or 7687)
    folder.mkdir(parents=True)
    (folder / "password").write_text("s3cret-from-file\n")
    (folder / "password").chmod(0o600)
    uri = f"{scheme}://{host}" + (f":{port}" if port else "")
    local_uri = scheme in ("bolt", "neo4j") and host in ("127.0.0.1", "localhost")
    assert local_password(uri, home) == ("s3cret-from-file" if local_uri else None)
    assert local_password(uri, home / "elsewhere") is None


def test_local_password_ignores_malformed_uris(tmp_path: Path) -> None:
    assert local_password("bolt://127.0.0.1:notaport", tmp_path) is None


def test_local_password_is_not_read_from_a_file_others_could_write_or_read(tmp_path: Path) -> None:
    """A password another user chose (a planted file) or can read would let them in, or give
    them the data written to a server they run."""
    folder = tmp_path / "instances" / "7687"
    folder.mkdir(parents=True)
    password = folder / "password"
    password.write_text("s3cret-from-file\n")
    password.chmod(0o600)
    assert local_password("bolt://127.0.0.1", tmp_path) == "s3cret-from-file"
    folder.chmod(0o777)
    with pytest.raises(ConfigurationError, match=f"^{folder} can be written by other users"):
        local_password("bolt://127.0.0.1", tmp_path)
    folder.chmod(0o700)
    password.chmod(0o644)
    with pytest.raises(ConfigurationError, match=f"^{password} can be read by other users"):
        local_password("bolt://127.0.0.1", tmp_path)


# ------------------------------------------------------------------------------- pid files, processes


def test_stale_pid_file_reads_as_not_running(tmp_path: Path) -> None:
    server = LocalNeo4j(home=tmp_path, port=free_port())
    server.pid_file.parent.mkdir(parents=True)
    server.pid_file.write_text(f"{_dead_pid()}\n")
    status = server.status()
    assert status.running is False and status.pid is None
    assert status.version == server.version
    assert server.stop() is False
    assert not server.pid_file.exists()


def test_pid_of_an_unrelated_process_reads_as_not_running(tmp_path: Path) -> None:
    # A reused pid: alive, but not a server of this instance folder. It must not be signalled.
    server = LocalNeo4j(home=tmp_path, port=free_port())
    server.pid_file.parent.mkdir(parents=True)
    server.pid_file.write_text(f"{os.getpid()}\n")
    assert server.status().running is False
    assert server.stop() is False


@pytest.mark.parametrize("version", [provision.FALLBACK, provision.LATEST])
def test_server_without_pid_file_is_found_and_stopped(tmp_path: Path, version: str) -> None:
    # A stand-in whose command line looks like this instance's server: found by its arguments
    # when the pid file is gone, then stopped through its process group.
    server = LocalNeo4j(home=tmp_path, port=free_port(), version=version)
    main_class = provision.release_line(version).main_class
    fake = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", main_class, f"--home-dir={server.instance_dir}"],
        start_new_session=True,
    )
    try:
        # Popen returns a moment before the kernel shows the new command line.
        deadline = time.monotonic() + 10
        while main_class not in (host.cmdline(fake.pid) or []) and time.monotonic() < deadline:
            time.sleep(0.01)
        status = server.status()
        assert status.running and status.pid == fake.pid
        assert status.version == server.version  # nothing answers on Bolt: the configured one
        assert server.stop(timeout=10) is True
        assert fake.wait(timeout=10) == -signal.SIGTERM
        assert server.stop() is False
    finally:
        fake.kill()
        fake.wait()


def test_conf_is_locked_down(tmp_path: Path) -> None:
    server = LocalNeo4j(home=tmp_path, port=7777, pagecache="256m")
    lines = server.config_text().splitlines()
    for line in (
        "server.default_listen_address=127.0.0.1",
        "server.bolt.listen_address=127.0.0.1:7777",
        "server.http.enabled=false",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.security.allow_csv_import_from_file_urls=false",
        "internal.dbms.cypher_ip_blocklist=0.0.0.0/0,::/0",
        "db.tx_log.rotation.size=128k",
        "db.tx_log.rotation.retention_policy=keep_none",
        "server.memory.pagecache.size=256m",
        f"server.directories.data={tmp_path.resolve() / 'instances' / '7777' / 'data'}",
    ):
        assert line in lines
    command = server.java_command("java")
    assert "-Xmx2g" in command and f"--home-dir={server.instance_dir}" in command
    assert "-XX:G1HeapRegionSize=4m" in command


@pytest.mark.parametrize(
    ("heap", "mb"),
    [("256m", 4), ("2g", 4), ("8g", 4), ("9g", 4), ("16g", 8), ("48g", 16), ("64g", 32), ("500g", 32), ("3000000k", 4)],
)
def test_the_g1_region_is_g1s_own_choice_but_never_under_4_mb(heap: str, mb: int) -> None:
    # G1 picks heap/2048 rounded down to a power of two, from 1 to 32 MB (JDK 17 to 25).
    assert conf.g1_region_mb(heap) == mb


def test_bad_sizes_are_rejected() -> None:
    with pytest.raises(ValueError):
        LocalNeo4j(heap="2x")
    with pytest.raises(ValueError):
        LocalNeo4j(pagecache="1024")


def test_taken_port_is_refused(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the port may be in TIME_WAIT
        sock.bind(("127.0.0.1", free_port()))
        sock.listen()
        server = LocalNeo4j(home=tmp_path, port=sock.getsockname()[1])
        with pytest.raises(ConfigurationError, match="already in use"):
            server.start(wait_seconds=5)
    assert not server.pid_file.exists()


def test_server_dying_at_start_reports_its_last_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server_body = (
        'echo "2026-01-01 00:00:00.000+0000 INFO  Starting..."\n'
        'echo "2026-01-01 00:00:01.000+0000 ERROR Failed to start Neo4j: port clash"\n'
        'echo "\tat org.neo4j.Foo.bar(Foo.java:1)"\n'
        "exit 3"
    )
    server = _fake_install(monkeypatch, tmp_path, provision.FALLBACK, server_body=server_body)
    with pytest.raises(
        BackendError, match=r"exited during start-up \(exit code 3\): ERROR Failed to start Neo4j: port clash"
    ):
        server.start(wait_seconds=30)
    assert not server.pid_file.exists()
    assert server.status().running is False


def test_last_meaningful_line_prefers_the_cause(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text(
        "2026-01-01 00:00:00.000+0000 INFO  Starting...\n"
        "2026-01-01 00:00:01.000+0000 ERROR Failed to start Neo4j\n"
        "java.lang.RuntimeException: wrapper\n"
        "\tat a.b.C(C.java:1)\n"
        "Caused by: java.net.BindException: Address already in use\n"
        "\t... 12 more\n"
    )
    assert logs.last_meaningful_line(log) == "Caused by: java.net.BindException: Address already in use"
    assert logs.last_meaningful_line(tmp_path / "missing.log") is None


def test_missing_maven_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _only_javas(monkeypatch, tmp_path, "17.0.15")
    _no_tools(monkeypatch, "java", "mvn")
    server = LocalNeo4j(home=tmp_path / "home")
    with pytest.raises(ConfigurationError, match=r"^Maven not found"):
        server.jars.provision()
    assert not server.jars.provisioned


# ------------------------------------------------------------------------------- CLI


def test_cli_status_json_shape_when_stopped(tmp_path: Path) -> None:
    port = free_port()
    args = ["status", "--json", "--port", str(port), "--home", str(tmp_path), "--neo4j-version", "5.26.30"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3, result.output  # stopped: 3, as service managers say it
    assert json.loads(result.stdout) == {
        "running": False,
        "uri": f"bolt://127.0.0.1:{port}",
        "version": "5.26.30",
        "pid": None,
        "password_file": None,
        "port_in_use": False,
    }


def test_cli_status_says_when_another_process_holds_the_port(tmp_path: Path) -> None:
    with socket.socket() as other:  # another home's server, or anything else listening there
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        args = ["status", "--port", str(port), "--home", str(tmp_path), "--neo4j-version", "5.26.30"]
        result = CliRunner().invoke(app, args)
        shown = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith(f"Neo4j 5.26.30 not running (bolt://127.0.0.1:{port}); another process holds")
    assert (shown["running"], shown["port_in_use"]) == (False, True)


def test_cli_stop_says_when_another_process_holds_the_port(tmp_path: Path) -> None:
    with socket.socket() as other:  # another home's server: this home's stop cannot reach it
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        result = CliRunner().invoke(app, ["stop", "--port", str(port), "--home", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Neo4j was not running (bolt://127.0.0.1:{port}); another process holds")


def test_cli_status_reads_port_home_and_version_from_env(tmp_path: Path) -> None:
    env = {"GRAPHMEM_NEO4J_PORT": "7791", "GRAPHMEM_HOME": str(tmp_path), "GRAPHMEM_NEO4J_VERSION": "2026.02.2"}
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == 3, result.output
    assert result.stdout.strip() == "Neo4j 2026.02.2 not running (bolt://127.0.0.1:7791)"


def test_cli_reads_port_home_and_version_from_dotenv_as_every_command_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GRAPHMEM_NEO4J_PORT", "GRAPHMEM_HOME", "GRAPHMEM_NEO4J_VERSION", "NEO4J_URI", "GRAPHMEM_NEO4J_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        f"GRAPHMEM_NEO4J_PORT=7792\nGRAPHMEM_HOME={tmp_path}\nGRAPHMEM_NEO4J_VERSION=5.26.30\n", encoding="utf-8"
    )
    assert Settings().neo4j_uri == "bolt://127.0.0.1:7792"  # where the other commands connect
    shown = json.loads(CliRunner().invoke(app, ["status", "--json"]).stdout)
    assert (shown["uri"], shown["version"]) == ("bolt://127.0.0.1:7792", "5.26.30")
    # The environment wins over .env, and the command line over both.
    env = CliRunner().invoke(app, ["status"], env={"GRAPHMEM_NEO4J_PORT": "7793"})
    assert env.stdout.strip() == "Neo4j 5.26.30 not running (bolt://127.0.0.1:7793)"
    given = CliRunner().invoke(app, ["stop", "--port", "7794"], env={"GRAPHMEM_NEO4J_PORT": "7793"})
    assert given.stdout.strip() == "Neo4j was not running (bolt://127.0.0.1:7794)"
    (tmp_path / ".env").write_text("GRAPHMEM_NEO4J_PORT=seven\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["status"])
    assert (bad.exit_code, bad.stderr.strip()) == (
        2,
        "error: GRAPHMEM_NEO4J_PORT: Input should be a valid integer, unable to parse string as an integer",
    )


def test_cli_maps_errors_to_one_line_and_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _only_javas(monkeypatch, tmp_path)
    home = ["--home", str(tmp_path / "home"), "--port", str(free_port())]
    result = CliRunner().invoke(app, ["start", *home])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith("error: Java 17+ not found")
    assert result.stdout == ""

    bad = CliRunner().invoke(app, ["start", "--heap", "2x", *home])
    assert bad.exit_code == 2
    assert bad.stderr.strip().startswith("error: --heap:")

    version = CliRunner().invoke(app, ["start", "--neo4j-version", "4.4.1", *home])
    assert version.exit_code == 2
    assert version.stderr.strip().startswith("error: --neo4j-version: '4.4.1' is not a Neo4j version")
