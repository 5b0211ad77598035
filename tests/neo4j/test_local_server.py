"""LocalNeo4j: one real start/stop cycle of a throwaway server, plus unit tests that need no server.

The real test runs a second instance on a free port in a temporary folder, on the jars already
provisioned under the default home (so it downloads nothing when `graphmem db start` has run).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import graphmem.server.local as local
from graphmem.cli.db import app
from graphmem.config import default_home
from graphmem.errors import BackendError, ConfigurationError
from graphmem.server import LocalNeo4j


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fake_java(tmp_path: Path, version: str, run_body: str = "exit 1") -> Path:
    """A JAVA_HOME whose bin/java answers -version with ``version`` and otherwise runs ``run_body``."""
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-version" ]; then\n'
        f'  echo \'openjdk version "{version}" 2024-01-16\' >&2\n'
        "  exit 0\n"
        "fi\n"
        f"{run_body}\n"
    )
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return java_home


def _no_tools(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    real_which = local.shutil.which
    monkeypatch.setattr(local.shutil, "which", lambda name, *a, **k: None if name in missing else real_which(name, *a, **k))


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()  # reaped: the pid names no process now
    return proc.pid


# ------------------------------------------------------------------------------- real server


@pytest.mark.neo4j
def test_start_status_stop_cycle(tmp_path: Path) -> None:
    try:
        local.find_java()
    except ConfigurationError as exc:
        pytest.skip(str(exc))
    server = LocalNeo4j(
        home=default_home(),  # shared jars: provisioned once, by whoever starts first
        instances_dir=tmp_path,
        port=_free_port(),
        heap="512m",
        pagecache="128m",
    )
    try:
        status = server.start(wait_seconds=180)
        assert status.running
        assert status.version.startswith("5.26")
        assert status.uri == server.uri == f"bolt://127.0.0.1:{server.port}"
        assert status.pid is not None and server.pid_file.read_text().strip() == str(status.pid)
        assert f"127.0.0.1:{server.port}" in server.conf_file.read_text()

        again = server.start()
        assert again.running and again.pid == status.pid
        _run(server, "CREATE (:Marker)")
        with pytest.raises(ConfigurationError, match="stop it before a fresh start"):
            server.start(fresh=True)

        assert server.stop() is True
        after = server.status()
        assert after.running is False and after.pid is None
        assert not server.pid_file.exists()
        assert server.stop() is False

        # A fresh start empties the store the previous run left behind.
        server.start(wait_seconds=180, fresh=True)
        assert _run(server, "MATCH (m:Marker) RETURN count(m) AS n") == [{"n": 0}]
    finally:
        server.stop(timeout=20)


def _run(server: LocalNeo4j, query: str) -> list[dict]:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(server.uri, auth=None) as driver:
        records, _, _ = driver.execute_query(query)
        return [record.data() for record in records]


# ------------------------------------------------------------------------------- no server


def test_missing_java_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    _no_tools(monkeypatch, "java")
    with pytest.raises(ConfigurationError, match=r"^Java 17\+ not found: install OpenJDK 17"):
        LocalNeo4j(home=tmp_path).provision()


def test_old_java_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "11.0.22")))
    with pytest.raises(ConfigurationError, match=r"Java 17\+ not found.*is Java 11"):
        LocalNeo4j(home=tmp_path / "home").provision()


def test_java_version_parsing() -> None:
    assert local._java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert local._java_major('java version "21" 2023-09-19') == 21
    assert local._java_major('java version "1.8.0_392"') == 8
    assert local._java_major("no version here") is None


def test_missing_maven_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "17.0.15")))
    _no_tools(monkeypatch, "mvn")
    server = LocalNeo4j(home=tmp_path / "home")
    with pytest.raises(ConfigurationError, match=r"^Maven not found"):
        server.provision()
    assert not server.provisioned


def test_stale_pid_file_reads_as_not_running(tmp_path: Path) -> None:
    server = LocalNeo4j(home=tmp_path, port=_free_port())
    server.pid_file.parent.mkdir(parents=True)
    server.pid_file.write_text(f"{_dead_pid()}\n")
    status = server.status()
    assert status.running is False and status.pid is None
    assert status.version == server.version
    assert server.stop() is False
    assert not server.pid_file.exists()


def test_pid_of_an_unrelated_process_reads_as_not_running(tmp_path: Path) -> None:
    # A reused pid: alive, but not a server of this instance folder. It must not be signalled.
    server = LocalNeo4j(home=tmp_path, port=_free_port())
    server.pid_file.parent.mkdir(parents=True)
    server.pid_file.write_text(f"{os.getpid()}\n")
    assert server.status().running is False
    assert server.stop() is False


def test_server_without_pid_file_is_found_and_stopped(tmp_path: Path) -> None:
    # A stand-in whose command line looks like this instance's server: found by its arguments
    # when the pid file is gone, then stopped through its process group.
    server = LocalNeo4j(home=tmp_path, port=_free_port())
    fake = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", local._MAIN_CLASS, f"--home-dir={server.instance_dir}"],
        start_new_session=True,
    )
    try:
        # Popen returns a moment before the kernel shows the new command line.
        deadline = time.monotonic() + 10
        while local._MAIN_CLASS not in (local._cmdline(fake.pid) or []) and time.monotonic() < deadline:
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


def test_conf_binds_loopback_on_the_port(tmp_path: Path) -> None:
    server = LocalNeo4j(home=tmp_path, port=7777, pagecache="256m")
    lines = server.config_text().splitlines()
    assert "server.default_listen_address=127.0.0.1" in lines
    assert "server.bolt.listen_address=127.0.0.1:7777" in lines
    assert "server.memory.pagecache.size=256m" in lines
    assert "dbms.security.auth_enabled=false" in lines
    assert f"server.directories.data={tmp_path.resolve() / 'instances' / '7777' / 'data'}" in lines
    command = server.java_command("java")
    assert "-Xmx2g" in command and f"--home-dir={server.instance_dir}" in command


def test_bad_sizes_are_rejected() -> None:
    with pytest.raises(ValueError):
        LocalNeo4j(heap="2x")
    with pytest.raises(ValueError):
        LocalNeo4j(pagecache="1024")


def test_taken_port_is_refused(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        server = LocalNeo4j(home=tmp_path, port=sock.getsockname()[1])
        with pytest.raises(ConfigurationError, match="already in use"):
            server.start(wait_seconds=5)
    assert not server.pid_file.exists()


def test_server_dying_at_start_reports_its_last_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        'echo "2026-01-01 00:00:00.000+0000 INFO  Starting..."\n'
        'echo "2026-01-01 00:00:01.000+0000 ERROR Failed to start Neo4j: port clash"\n'
        'echo "\tat org.neo4j.Foo.bar(Foo.java:1)"\n'
        "exit 3"
    )
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "17.0.15", body)))
    server = LocalNeo4j(home=tmp_path / "home", port=_free_port())
    server.lib_dir.mkdir(parents=True)  # pretend provisioned: no Maven here
    (server.dist_dir / ".provisioned").write_text("{}\n")
    with pytest.raises(BackendError, match=r"exited during start-up \(exit code 3\): ERROR Failed to start Neo4j: port clash"):
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
    assert local._last_meaningful_line(log) == "Caused by: java.net.BindException: Address already in use"
    assert local._last_meaningful_line(tmp_path / "missing.log") is None


# ------------------------------------------------------------------------------- CLI


def test_cli_status_json_shape_when_stopped(tmp_path: Path) -> None:
    port = _free_port()
    result = CliRunner().invoke(app, ["status", "--json", "--port", str(port), "--home", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "running": False,
        "uri": f"bolt://127.0.0.1:{port}",
        "version": "5.26.30",
        "pid": None,
    }


def test_cli_status_reads_port_and_home_from_env(tmp_path: Path) -> None:
    env = {"GRAPHMEM_NEO4J_PORT": "7791", "GRAPHMEM_HOME": str(tmp_path)}
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "Neo4j 5.26.30 not running (bolt://127.0.0.1:7791)"


def test_cli_maps_errors_to_one_line_and_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    _no_tools(monkeypatch, "java")
    home = ["--home", str(tmp_path), "--port", str(_free_port())]
    result = CliRunner().invoke(app, ["start", *home])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith("error: Java 17+ not found")
    assert result.stdout == ""

    bad = CliRunner().invoke(app, ["start", "--heap", "2x", *home])
    assert bad.exit_code == 2
    assert bad.stderr.strip().startswith("error: --heap:")
