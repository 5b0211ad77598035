"""Provision and run a local Neo4j Community server with no Docker and no tarball download.

Neo4j Community is published on Maven Central as ordinary jars, so the server is assembled
with Maven (``dependency:copy-dependencies`` of ``org.neo4j:neo4j``) and started with a Java
found on this machine. Package registries are the only downloads this works with, which is why
it is done this way rather than with neo4j.com's tarball.

Versions: Neo4j 2026.02.2 (``LATEST``, entry point ``org.neo4j.server.Neo4jCommunity``) needs
Java 21+; 5.26.30 (``FALLBACK``, ``org.neo4j.server.CommunityEntryPoint``), the last line that
runs on Java 17, is used when no Java 21+ is installed. Both take the same arguments.

Layout under ``home`` (``graphmem.settings.config.default_home()`` unless given; the folders graphmem
creates are this user's only, and it uses none that another user could change, see
graphmem.settings.trust)::

    neo4j-<version>/pom.xml         the one-dependency pom Maven resolves
    neo4j-<version>/mvn.log         Maven's output from the last provisioning attempt
    neo4j-<version>/lib/*.jar       the server's class path (renamed into place when complete)
    neo4j-<version>/.provisioned    marker: written only after lib/ is complete
    instances/<port>/               one server, mode 0700: conf/neo4j.conf, data/, logs/console.log,
                                    run/neo4j.pid
    instances/<port>/password       the password of its user ``neo4j``, mode 0600
    instances/<port>/store-version  the Neo4j version that last ran its store

Secure by default: Bolt on 127.0.0.1 only, no HTTP, authentication on, and LOAD CSV can read
no local file and fetch no URL. The password is set before the server first starts, with
Neo4j's own ``neo4j-admin dbms set-initial-password`` (``org.neo4j.cli.AdminTool`` on the same
jars), which writes ``data/dbms/auth.ini``. Neo4j applies that file while the system database
starts, before Bolt opens, so no client ever meets a server with a default password. It also
applies it to an existing store whose user ``neo4j`` still has the default password, which is
every store from the earlier graphmem that ran without authentication: such an instance gets
its password on its next start, with its data.

Store upgrade: a store written by 5.26 opens in 2026.x as it is. Neo4j upgrades the system
database while it starts and each database's kernel version at its first write (debug.log:
"Upgrade transaction from KernelVersion{V5_25...} to KernelVersion{V2026_02...}"), in place,
data kept; ``neo4j-admin database migrate`` is only for changing the store format, which this
does not. There is no way back: 5.26 refuses the upgraded logs ("Log file contains entries with
prefix 29 ... we don't support downgrading from") and does not start. So ``store-version``
records which version last ran an instance, and start() refuses to run an older one on it.

Erasure on disk: transaction logs rotate at 128 KiB, the smallest size Neo4j accepts, no log
history is kept, and a checkpoint (which prunes closed logs) follows any write within about
10 s; docs/security.md says what a deleted value leaves behind (``Neo4jDatabase.flush_erased``).

The password goes only to this user's server: a client that read it from the instance folder
(``own_port``, the driver's resolver, run for every new connection before it opens) first checks
that no other user's process listens on the port, so a process of another local user that took
the port while the server was down (or in the moment a start spawns it) gets nothing. Linux only
(``/proc/net``); elsewhere the port is not checked.

It is a local development and test database, never a shared one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from neo4j import Address, GraphDatabase
from neo4j.exceptions import AuthError, DriverError, Neo4jError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphmem.errors import BackendError, ConfigurationError
from graphmem.server.java import Java, installed_javas
from graphmem.settings.config import DEFAULT_BOLT_PORT, default_home
from graphmem.settings.trust import private_dir, private_tree, trusted, user_name

__all__ = [
    "LocalNeo4j",
    "Status",
    "LATEST",
    "FALLBACK",
    "default_version",
    "find_java",
    "local_password",
    "password_file",
]

LATEST = "2026.02.2"
"""The Neo4j run when a Java 21+ is installed."""
FALLBACK = "5.26.30"
"""The Neo4j run on Java 17: 5.26 is the last line that supports it."""

TX_LOG_ROTATION_KIB = 128
"""Transaction log rotation size: the minimum both 5.26 and 2026.x accept."""

# What instances from before `store-version` existed were run with: the earlier graphmem ran
# only this version, so an unrecorded store was written by it.
_UNRECORDED_STORE = "5.26.30"

# Pinned so the same Maven gives the same result over time: an unpinned `dependency:` prefix
# resolves to whatever the local Maven's defaults say (2.8 on Maven 3.8, something else elsewhere).
_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
_MAVEN_TIMEOUT_S = 30 * 60
_ADMIN_CLASS = "org.neo4j.cli.AdminTool"
# What the server and its admin tool create (store, transaction logs, auth.ini, logs) is this
# user's only, like the instance folder that holds it.
_PRIVATE_UMASK = 0o077


@dataclass(frozen=True)
class _Line:
    """What a Neo4j release line needs: its entry point and the Java majors it runs on."""

    main_class: str
    min_java: int
    max_java: int | None

    def runs_on(self, major: int) -> bool:
        return self.min_java <= major and (self.max_java is None or major <= self.max_java)

    @property
    def javas(self) -> str:
        return f"Java {self.min_java}+" if self.max_java is None else f"Java {self.min_java} to {self.max_java}"


_LINE_5 = _Line("org.neo4j.server.CommunityEntryPoint", 17, 21)
_LINE_CALVER = _Line("org.neo4j.server.Neo4jCommunity", 21, None)  # 2025.01 and later
_MAIN_CLASSES = (_LINE_5.main_class, _LINE_CALVER.main_class)


def _line(version: str) -> _Line:
    return _LINE_5 if version.startswith("5.") else _LINE_CALVER


def _version_key(version: str) -> tuple[int, ...]:
    # 5.26.30 < 2026.02.2: calendar versions continue the numbering after 5.x.
    return tuple(int(part) for part in version.split("."))


# What Neo4j's own launcher would add from its default neo4j.conf (server.jvm.additional).
# The entry point does not read those settings, so they are passed here. Without the
# --add-opens flags the page cache falls back to a slower path and says so in debug.log.
# -XX:+AlwaysPreTouch is left out on purpose: it commits the whole heap up front and slows
# start-up, which matters more for a development server than steady-state latency.
_JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    # A server that ran out of heap is in an unknown state; dying lets status() tell the truth.
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    # Lucene's SIMD distance functions (Panama): without the module the vector index computes
    # every HNSW distance in scalar code, and Neo4j warns so in console.log. Measured here: the
    # largest single cost of a write's commit (its vector inserts) and of a vector query.
    "--add-modules=jdk.incubator.vector",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
)

_JAVA_MISSING = (
    f"Java 17+ not found: install Java 21+ (runs Neo4j {LATEST}) or OpenJDK 17 "
    f"(runs {FALLBACK}; apt-get install openjdk-17-jre-headless)"
)
_MAVEN_MISSING = "Maven not found: install Maven 3.6.3+ (apt-get install maven); it downloads Neo4j from Maven Central"

_SIZE = re.compile(r"^[1-9][0-9]*[kmg]$")
#: The smallest G1 region the local server runs with. G1 picks heap/2048 (1 MB for the default
#: 2 GB heap), and an object of half a region or more is "humongous": placed apart, and it may
#: start a concurrent collection. A write's Bolt messages (a batch's rows) and its commit's
#: buffers are that large. Measured here, a 10k-fact ingest (jstat): 9-10 young and 2-6
#: concurrent collections, 0.9-1.2 s of GC, with 1 MB regions; 5-6 and 0-2, 0.23-0.43 s, with 4 MB.
MIN_REGION_MB = 4


def g1_region_mb(heap: str) -> int:
    """The G1 region size for ``heap`` (a size like ``2g``): G1's own choice (heap/2048, a power
    of two from 1 to 32 MB), at least ``MIN_REGION_MB``."""
    size = int(heap[:-1]) << {"k": 10, "m": 20, "g": 30}[heap[-1]]
    picked = 1 << min(25, max(20, (size // 2048).bit_length() - 1))
    return max(picked >> 20, MIN_REGION_MB)


_VERSION = re.compile(r"5\.[0-9]+\.[0-9]+|20[0-9]{2}\.[0-9]{2}\.[0-9]+")
_LOCAL_HOSTS = ("127.0.0.1", "localhost")
_TCP_LISTEN = "0A"  # the LISTEN state in /proc/net/tcp

# Handles of servers this process spawned, by pid. Keeping them (a) lets poll() reap an exited
# child, which os.kill(pid, 0) alone would still report as alive (a zombie), and (b) stops
# Popen.__del__ from warning that a deliberately detached child is "still running".
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_EXIT_CODES: dict[int, int] = {}  # of those children once reaped, for the start-up error message


def default_version() -> str:
    """``LATEST`` when a Java it runs on is installed, else ``FALLBACK``."""
    return LATEST if any(_line(LATEST).runs_on(java.major) for java in installed_javas()) else FALLBACK


def find_java(version: str) -> Java:
    """The Java to run Neo4j ``version`` with: ``$JAVA_HOME`` if that version runs on it, else
    the newest installed Java it runs on.

    Raises ConfigurationError when there is none, naming the Javas found.
    """
    javas = installed_javas()
    line = _line(version)
    fitting = [java for java in javas if line.runs_on(java.major)]
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        chosen = [java for java in fitting if java.path == str(Path(java_home) / "bin" / "java")]
        if chosen:
            return chosen[0]
    if fitting:
        return max(fitting, key=lambda java: java.major)
    if not any(java.major >= _LINE_5.min_java for java in javas):
        found = ", ".join(f"{java.path} is Java {java.major}" for java in javas)
        raise ConfigurationError(_JAVA_MISSING + (f" ({found})" if found else ""))
    found = ", ".join(f"Java {java.major} ({java.path})" for java in javas)
    raise ConfigurationError(f"Neo4j {version} needs {line.javas}; found {found}")


def password_file(uri: str, home: Path) -> Path | None:
    """Where the password of the local server ``uri`` names is kept: ``<home>/instances/<port>/
    password``, written by ``graphmem db start``. Only a ``bolt://`` or ``neo4j://`` URI on
    127.0.0.1 or localhost names a local server (port 7687 when none is given); None for any
    other URI."""
    try:
        parts = urlsplit(uri)
        port = parts.port or DEFAULT_BOLT_PORT
    except ValueError:  # a port that is not a number
        return None
    if parts.scheme not in ("bolt", "neo4j") or parts.hostname not in _LOCAL_HOSTS:
        return None
    return home / "instances" / str(port) / "password"


def local_password(uri: str, home: Path) -> str | None:
    """The password of the local server ``uri`` names, from its ``password_file`` under
    ``home``. None for any other URI, or when that file is missing or unreadable. Raises
    ConfigurationError when another user could have written or may read it (graphmem.settings.trust).

    Example: ``local_password("bolt://127.0.0.1:7688", Path("~/.cache/graphmem").expanduser())``.
    """
    path = password_file(uri, home)
    return _read_password(path) if path is not None else None


def listening_users(port: int) -> set[int] | None:
    """The uids of the processes listening on TCP ``port`` of this machine, on any address,
    IPv4 or IPv6 (Linux: /proc/net/tcp and tcp6); None where neither can be read."""
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


def _read_password(path: Path) -> str | None:
    """The password in ``path``; None when the file is missing, unreadable or empty. A file
    another user could have written or may read is refused (ConfigurationError): they would
    know the password, or have chosen it."""
    try:
        return trusted(path, secret=True).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


class Status(BaseModel):
    """What ``graphmem db status --json`` prints."""

    running: bool
    uri: str
    version: str
    pid: int | None
    password_file: str | None
    """Where the password of user ``neo4j`` is, once the instance has one."""
    port_in_use: bool = False
    """Not running, yet another process holds the port (a server of another home, say): a
    client pointed at the port reaches that process, not this instance."""


class LocalNeo4j(BaseModel):
    """One local Neo4j Community server: the jars under ``home``, the instance under ``instances_dir``.

    Every method is idempotent and safe to call from several processes: provisioning and
    start-up each hold a file lock, and the pid file plus the process's command line (which
    names its instance folder) are the only state, so a restarted Python process finds a
    server started by another one.
    """

    model_config = ConfigDict(frozen=True)

    home: Path = Field(default_factory=default_home)
    port: int = Field(DEFAULT_BOLT_PORT, ge=1, le=65535)
    version: str = Field(default_factory=default_version)
    """The Neo4j to run: ``LATEST`` when a Java 21+ is installed, else ``FALLBACK``."""
    heap: str = "2g"
    pagecache: str = "1g"
    instances_dir: Path | None = None
    """Where instance folders go (``<home>/instances`` if None). ``local_password`` looks only
    under ``<home>/instances``: connections to a server elsewhere need its ``password``."""

    @field_validator("home", "instances_dir")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        # The instance path is matched against the server's command line, so it must be
        # spelled the same way by every process: absolute, user-expanded, symlinks resolved.
        return None if value is None else value.expanduser().resolve()

    @field_validator("heap", "pagecache")
    @classmethod
    def _size(cls, value: str) -> str:
        value = value.strip().lower()
        if not _SIZE.match(value):
            raise ValueError(f"{value!r} is not a size like 512m or 2g")
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not _VERSION.fullmatch(value):
            raise ValueError(f"{value!r} is not a Neo4j version like {LATEST} or {FALLBACK}")
        return value

    # ----------------------------------------------------------------------------- paths

    @property
    def uri(self) -> str:
        """The Bolt URI of this server: ``bolt://127.0.0.1:<port>``."""
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def dist_dir(self) -> Path:
        return self.home / f"neo4j-{self.version}"

    @property
    def lib_dir(self) -> Path:
        return self.dist_dir / "lib"

    @property
    def instance_dir(self) -> Path:
        return (self.instances_dir or self.home / "instances") / str(self.port)

    @property
    def conf_file(self) -> Path:
        return self.instance_dir / "conf" / "neo4j.conf"

    @property
    def pid_file(self) -> Path:
        # Neo4j itself writes (and on clean shutdown deletes) <home-dir>/run/neo4j.pid; using
        # the same file means both agree and a clean stop leaves nothing stale behind.
        return self.instance_dir / "run" / "neo4j.pid"

    @property
    def console_log(self) -> Path:
        return self.instance_dir / "logs" / "console.log"

    @property
    def password_file(self) -> Path:
        return self.instance_dir / "password"

    @property
    def password(self) -> str | None:
        """The password of user ``neo4j`` (None before the first start); ConfigurationError
        when another user could have written or may read it."""
        return _read_password(self.password_file)

    @property
    def mvn_log(self) -> Path:
        return self.dist_dir / "mvn.log"

    @property
    def _marker(self) -> Path:
        return self.dist_dir / ".provisioned"

    @property
    def _store_version_file(self) -> Path:
        return self.instance_dir / "store-version"

    @property
    def _auth_ini(self) -> Path:
        # Where set-initial-password writes, under server.directories.data.
        return self.instance_dir / "data" / "dbms" / "auth.ini"

    @property
    def provisioned(self) -> bool:
        """True when the jars for ``version`` are complete (the marker is written last)."""
        return self._marker.is_file() and self.lib_dir.is_dir()

    # ----------------------------------------------------------------------------- provisioning

    def provision(self) -> Path:
        """Make sure the server's jars are under ``<home>/neo4j-<version>/lib``; return that folder.

        Checks for a Java that ``version`` runs on every time, since start() needs it; Maven
        only when a download is needed, so a machine with the jars already in place runs
        without Maven. The jars are copied into a temporary folder and renamed into place,
        then the marker is written: an interrupted run leaves no half-filled lib/ that would
        later look complete.

        Raises ConfigurationError when Java or Maven is missing, Maven fails (naming mvn.log),
        or a user other than this one (or root) could change the jars (graphmem.settings.trust).
        """
        find_java(self.version)
        if self.provisioned:
            return self._trusted_jars()
        private_dir(self.dist_dir)
        with _locked(self.dist_dir / ".provision.lock"):
            if self.provisioned:  # another process finished while we waited for the lock
                return self._trusted_jars()
            mvn = shutil.which("mvn")
            if mvn is None:
                raise ConfigurationError(_MAVEN_MISSING)
            # Anything left from an interrupted run is ours to clear: we hold the lock.
            for stale in self.dist_dir.glob("lib.tmp-*"):
                shutil.rmtree(stale, ignore_errors=True)
            if self.lib_dir.exists():  # renamed into place but the marker never written
                shutil.rmtree(self.lib_dir)
            pom = self.dist_dir / "pom.xml"
            pom.write_text(_pom(self.version), encoding="utf-8")
            tmp = Path(tempfile.mkdtemp(prefix="lib.tmp-", dir=self.dist_dir))
            try:
                self._run_maven(mvn, pom, tmp)
                if not (tmp / f"neo4j-{self.version}.jar").is_file():
                    raise ConfigurationError(
                        f"Maven finished but neo4j-{self.version}.jar is missing; see {self.mvn_log}"
                    )
                jars = len(list(tmp.glob("*.jar")))
                os.rename(tmp, self.lib_dir)  # private, as mkdtemp made it: code run as this user
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            _write_private(
                self._marker,
                json.dumps(
                    {
                        "version": self.version,
                        "jars": jars,
                        "provisioned_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    }
                )
                + "\n",
            )
        return self._trusted_jars()

    def _trusted_jars(self) -> Path:
        """The jar folder, once no other user could have put or changed a jar in it (they
        would run as this user): graphmem.settings.trust."""
        return trusted(self.lib_dir, contents=True)

    def _run_maven(self, mvn: str, pom: Path, out_dir: Path) -> None:
        cmd = [
            mvn,
            "-B",
            "--no-transfer-progress",
            "-Dstyle.color=never",  # -B alone still leaves ANSI resets in the log
            "-f",
            str(pom),
            f"{_DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={out_dir}",
        ]
        with open(self.mvn_log, "wb") as log:
            log.write(("$ " + " ".join(cmd) + "\n").encode())
            log.flush()
            try:
                rc = subprocess.run(
                    cmd,
                    cwd=self.dist_dir,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=_MAVEN_TIMEOUT_S,
                    check=False,
                ).returncode
            except subprocess.TimeoutExpired:
                raise ConfigurationError(
                    f"Maven did not finish downloading Neo4j {self.version} in {_MAVEN_TIMEOUT_S} s; see {self.mvn_log}"
                ) from None
        if rc != 0:
            reason = _first_maven_error(self.mvn_log)
            raise ConfigurationError(
                f"Maven could not fetch Neo4j {self.version} (exit {rc})"
                + (f": {reason}" if reason else "")
                + f"; see {self.mvn_log}"
            )

    # ----------------------------------------------------------------------------- configuration

    def config_text(self) -> str:
        """The neo4j.conf that start() writes (regenerated on every start, so edits do not stick)."""
        inst = self.instance_dir
        return "\n".join(
            [
                "# Generated by graphmem on every `graphmem db start`; edits are overwritten.",
                "# Heap is not read from here by the entry point: it is passed as",
                f"# -Xms{self.heap} -Xmx{self.heap} on the java command line.",
                "# Loopback only, Bolt only, and every connection authenticated.",
                "server.default_listen_address=127.0.0.1",
                f"server.bolt.listen_address=127.0.0.1:{self.port}",
                "server.http.enabled=false",
                "server.https.enabled=false",
                "dbms.security.auth_enabled=true",
                "# No lock-out after refused logins: every local user reaches the port, and one could",
                "# keep the owner locked out. The password is 192 random bits: guessing needs no lock-out.",
                "dbms.security.auth_max_failed_attempts=0",
                "# LOAD CSV reads no file of this machine and fetches from no address (every IPv4",
                "# and IPv6 address is blocked), so a query cannot read local files or reach the network.",
                "dbms.security.allow_csv_import_from_file_urls=false",
                "internal.dbms.cypher_ip_blocklist=0.0.0.0/0,::/0",
                "# Erased values leave the transaction logs soon: the smallest rotation size Neo4j",
                "# accepts, no history kept, and a checkpoint (which prunes closed logs) after any",
                "# write, checked every 10 s.",
                f"db.tx_log.rotation.size={TX_LOG_ROTATION_KIB}k",
                "db.tx_log.rotation.retention_policy=keep_none",
                "db.checkpoint.interval.tx=1",
                f"server.memory.pagecache.size={self.pagecache}",
                "dbms.usage_report.enabled=false",
                f"server.directories.data={inst / 'data'}",
                f"server.directories.logs={inst / 'logs'}",
                f"server.directories.run={inst / 'run'}",
                "",
            ]
        )

    def java_command(self, java: str) -> list[str]:
        """The command line start() runs; ``--home-dir`` names the instance, which identifies it."""
        return [
            java,
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            f"-XX:G1HeapRegionSize={g1_region_mb(self.heap)}m",
            *_JVM_FLAGS,
            "-cp",
            f"{self.lib_dir}/*",
            _line(self.version).main_class,
            f"--home-dir={self.instance_dir}",
            f"--config-dir={self.conf_file.parent}",
            "--console-mode",
        ]

    # ----------------------------------------------------------------------------- lifecycle

    def start(
        self,
        wait_seconds: float = 120,
        progress: Callable[[str], None] | None = None,
        *,
        fresh: bool = False,
    ) -> Status:
        """Start the server (provisioning it first) and return once Bolt accepts its password.

        ``progress`` receives one-line notes for a human (the CLI prints them on stderr): which
        Neo4j runs on which Java, a store upgrade, and before the slow steps (provisioning,
        spawning the server). ``wait_seconds`` counts from the spawn, so a first start's
        download does not eat into it.

        The first start writes the instance's password file and has Neo4j set it before the
        server opens Bolt (see the module docstring); later starts reuse it.

        ``fresh`` deletes the instance's data folder first: for throwaway servers (the test
        suite), whose leftover store from an earlier run may need a long crash recovery.

        Idempotent: if this instance is already running, waits for it to answer and returns its
        status. Raises ConfigurationError if no suitable Java or Maven is found, the port is
        held by another process, a fresh start is asked of a running server, the store was
        written by a newer Neo4j than ``version``, the server refuses the password file's
        password, or another user could change the instance folder or the jars
        (graphmem.settings.trust); BackendError if the server exits during start-up (with the last
        meaningful log line) or does not answer within ``wait_seconds`` (it is then stopped).
        """
        note = progress or (lambda _: None)
        private_dir(self.instance_dir)
        # Holds the password and the data: no other local user may read it. Instances made
        # by the earlier graphmem were created with the default umask, so this is set each time.
        os.chmod(self.instance_dir, 0o700)
        # Serialises concurrent starts of the same instance; the loser finds it running.
        with _locked(self.instance_dir / ".start.lock"):
            pid = self._running_pid()
            if pid is not None and fresh:
                raise ConfigurationError(f"Neo4j (pid {pid}) is running on {self.uri}; stop it before a fresh start")
            if pid is not None:
                deadline = time.monotonic() + wait_seconds
                if not self.pid_file.is_file() or self.pid_file.read_text().strip() != str(pid):
                    _write_private(self.pid_file, f"{pid}\n")  # found by its command line: heal
                if self._runs_without_auth():
                    note(
                        f"warning: the server on {self.uri} was started without authentication by an "
                        f"earlier graphmem; restart it (graphmem db stop --port {self.port}, then start) "
                        "to turn authentication on, data kept"
                    )
                if not self._wait_for_bolt(pid, deadline):
                    raise BackendError(
                        f"Neo4j (pid {pid}) is running but did not answer on {self.uri} "
                        f"within {wait_seconds:g} s; see {self.console_log}"
                    )
                return self.status()

            # Checked before provisioning so a taken port fails fast, not after a download.
            if not _port_free(self.port):
                raise ConfigurationError(
                    f"port {self.port} on 127.0.0.1 is already in use by another process; "
                    "stop it or choose another --port"
                )
            if fresh:
                shutil.rmtree(self.instance_dir / "data", ignore_errors=True)
                self._store_version_file.unlink(missing_ok=True)
            stored = self._stored_version()
            if stored is not None and _version_key(stored) > _version_key(self.version):
                raise ConfigurationError(
                    f"the store in {self.instance_dir} was written by Neo4j {stored}, which "
                    f"{self.version} cannot open: run {stored} (it needs {_line(stored).javas}; "
                    "--neo4j-version) or start over with --fresh (deletes this instance's data)"
                )
            if not self.provisioned:
                note(
                    f"first start: provisioning Neo4j {self.version} into {self.dist_dir} "
                    "(Maven downloads ~150 MB; about a minute)..."
                )
            self.provision()
            java = find_java(self.version)
            note(f"Neo4j {self.version} on Java {java.major} ({java.path})")
            if stored is not None and stored != self.version:
                note(
                    f"upgrading this instance's store from Neo4j {stored} to {self.version} in place, "
                    f"data kept (one way: {stored} cannot open it afterwards)"
                )
            note(f"starting Neo4j on {self.uri} (logs: {self.console_log})...")
            for sub in ("conf", "data", "logs", "run"):
                (self.instance_dir / sub).mkdir(exist_ok=True)
            _write_private(self.conf_file, self.config_text())
            created = self._ensure_password()
            if created or not self._auth_ini.is_file():
                self._set_initial_password(java)
            _write_private(self._store_version_file, f"{self.version}\n")
            if self.console_log.exists():  # keep the previous run's output for one more start
                os.replace(self.console_log, self.console_log.with_suffix(".log.1"))

            private_tree(self.instance_dir)
            with _open_private(self.console_log) as console:
                proc = subprocess.Popen(
                    self.java_command(java.path),
                    cwd=self.instance_dir,
                    stdin=subprocess.DEVNULL,
                    stdout=console,
                    stderr=subprocess.STDOUT,
                    # Its own session: outlives this process and the terminal, and its process
                    # group can be signalled as a whole by stop().
                    start_new_session=True,
                    umask=_PRIVATE_UMASK,
                )
            _CHILDREN[proc.pid] = proc
            _write_private(self.pid_file, f"{proc.pid}\n")
            deadline = time.monotonic() + wait_seconds

            try:
                answered = self._wait_for_bolt(proc.pid, deadline)
            except BaseException:
                # Died during start-up (BackendError), refused the password, or start was
                # interrupted: leave no half-started server behind.
                self.stop(timeout=10)
                raise
            if not answered:
                self.stop(timeout=10)
                raise BackendError(
                    f"Neo4j did not answer on {self.uri} within {wait_seconds:g} s (stopped it; "
                    "a store recovering from a crash can need a longer --wait); "
                    f"see {self.console_log}"
                )
            return self.status()

    def stop(self, timeout: float = 60) -> bool:
        """Stop the server: SIGTERM its process group, SIGKILL after ``timeout`` seconds.

        Returns True if a running server was stopped, False if none was running (a stale pid
        file is removed either way).
        """
        pid = self._running_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        _signal_group(pid, signal.SIGTERM)
        if not _wait_gone(pid, timeout):
            _signal_group(pid, signal.SIGKILL)
            _wait_gone(pid, 10)
        self.pid_file.unlink(missing_ok=True)
        return True

    def status(self) -> Status:
        """Whether this instance runs, and which version: asked of the server when it answers;
        when stopped, the version that last ran its store (``store-version``), else the one a
        start would run.

        A pid file whose process is gone, or now belongs to an unrelated process, reads as not
        running. A server that runs but does not answer yet reports the configured version.
        """
        password_file = str(self.password_file) if self.password_file.is_file() else None
        pid = self._running_pid()
        if pid is None:
            version = self._stored_version() or self.version
        else:
            version = self._server_version() or self.version
        return Status(
            running=pid is not None,
            uri=self.uri,
            version=version,
            pid=pid,
            password_file=password_file,
            port_in_use=pid is None and not _port_free(self.port),
        )

    # ----------------------------------------------------------------------------- internals

    def _ensure_password(self) -> bool:
        """Create the password file if there is none (True when created now); keep it private."""
        if self.password_file.is_file():
            os.chmod(self.password_file, 0o600)
            return False
        # Hex: a password starting with "-" would be read as an option by the admin tool.
        _write_private(self.password_file, secrets.token_hex(24) + "\n")
        return True

    def _set_initial_password(self, java: Java) -> None:
        """Have Neo4j's admin tool write data/dbms/auth.ini with the password file's password.

        The java launcher reads the main class and its arguments from an argument file, so the
        password never appears in the process list, which every local user can read.
        """
        argfile = self.instance_dir / ".set-password.args"
        args = ["-cp", f"{self.lib_dir}/*", _ADMIN_CLASS, "dbms", "set-initial-password", "--", self.password or ""]
        _write_private(argfile, "\n".join(_argfile_quote(arg) for arg in args) + "\n")
        env = {**os.environ, "NEO4J_HOME": str(self.instance_dir), "NEO4J_CONF": str(self.conf_file.parent)}
        try:
            done = subprocess.run(
                [java.path, f"@{argfile}"],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
                umask=_PRIVATE_UMASK,  # it writes data/dbms/auth.ini
            )
        except subprocess.TimeoutExpired:
            raise BackendError("Neo4j's set-initial-password did not finish in 300 s") from None
        finally:
            argfile.unlink(missing_ok=True)
        if done.returncode != 0 or not self._auth_ini.is_file():
            lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
            raise BackendError(
                f"Neo4j's set-initial-password failed (exit {done.returncode})"
                + (f": {lines[-1][:300]}" if lines else "")
            )

    def _stored_version(self) -> str | None:
        """The Neo4j version that last ran this instance's store; None when it has no store."""
        try:
            return self._store_version_file.read_text(encoding="utf-8").strip() or None
        except OSError:
            pass
        return _UNRECORDED_STORE if (self.instance_dir / "data" / "databases").is_dir() else None

    def _runs_without_auth(self) -> bool:
        try:
            return "dbms.security.auth_enabled=false" in self.conf_file.read_text(encoding="utf-8").splitlines()
        except OSError:
            return False

    def _auth(self) -> tuple[str, str] | None:
        password = self.password
        return ("neo4j", password) if password else None

    def _refused(self) -> ConfigurationError:
        return ConfigurationError(
            f"Neo4j on {self.uri} refused the password in {self.password_file}: its user neo4j "
            "has another password, set outside graphmem; write that password into the file, or "
            "start over with --fresh (deletes this instance's data)"
        )

    def _running_pid(self) -> int | None:
        """The pid of this instance's server if it is alive, else None.

        The pid file is the normal source. If it is missing or stale, the process table is
        searched too: a server whose pid file was deleted still holds the data folder's store
        lock and the port, and must read as running rather than as "port taken".
        """
        marker = f"--home-dir={self.instance_dir}"
        try:
            pid: int | None = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            pid = None
        if pid is not None and _alive(pid):
            # Pids are reused: make sure the process is the server of *this* instance folder.
            # An empty command line means "cannot tell" (a process in the middle of exec shows
            # none for a moment, right after start() spawned it), so the pid file is trusted.
            args = _cmdline(pid)
            if not args or marker in args:
                return pid
        return _find_process(marker)

    def _wait_for_bolt(self, pid: int, deadline: float) -> bool:
        """Poll Bolt until it accepts the password (True) or ``deadline`` passes (False).

        Raises BackendError if the process exits first, with the last meaningful log line, and
        ConfigurationError if the server refuses the password.
        """
        with GraphDatabase.driver(self.uri, auth=self._auth(), connection_timeout=2.0, resolver=own_port) as driver:
            while True:
                if not _alive(pid):
                    self.pid_file.unlink(missing_ok=True)
                    exit_code = _EXIT_CODES.pop(pid, None)
                    code = f" (exit code {exit_code})" if exit_code is not None else ""
                    line = _last_meaningful_line(self.console_log)
                    raise BackendError(
                        f"Neo4j exited during start-up{code}"
                        + (f": {line}" if line else "")
                        + f"; see {self.console_log}"
                    )
                try:
                    driver.verify_connectivity()
                    return True
                except AuthError:
                    raise self._refused() from None
                except (DriverError, Neo4jError, OSError):
                    pass
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.5)

    def _server_version(self) -> str | None:
        # A plain session rather than execute_query: the latter retries for up to 30 s when
        # nothing answers, and status() must be quick for a server that is still starting.
        try:
            with (
                GraphDatabase.driver(self.uri, auth=self._auth(), connection_timeout=2.0, resolver=own_port) as driver,
                driver.session() as session,
            ):
                record = session.run(
                    "CALL dbms.components() YIELD name, versions "
                    "WHERE name = 'Neo4j Kernel' RETURN versions[0] AS version"
                ).single()
        except (DriverError, Neo4jError, OSError):
            return None
        return str(record["version"]) if record is not None else None


# --------------------------------------------------------------------------------- helpers


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by this user only from the first byte."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _open_private(path: Path) -> BinaryIO:
    """``path`` emptied (or created) for writing, readable by this user only."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")


def _argfile_quote(arg: str) -> str:
    # Java argument files split on whitespace; inside double quotes a backslash escapes.
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _pom(version: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by graphmem: Maven resolves Neo4j Community {version} and its dependencies,
     and copies them into lib/ (graphmem.server.local.LocalNeo4j.provision). -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>graphmem</groupId>
  <artifactId>neo4j-runtime</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.neo4j</groupId>
      <artifactId>neo4j</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


def _first_maven_error(log: Path) -> str | None:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        line = _strip_ansi(line).strip()
        if line.startswith("[ERROR]") and len(line) > len("[ERROR] "):
            return line[len("[ERROR] ") :][:200]
    return None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+[+-]\d{4} +")
_NOISE = re.compile(r"^(at |\.\.\. \d+ more|Suppressed:)")


def _strip_ansi(line: str) -> str:
    return _ANSI.sub("", line)


def _last_meaningful_line(log: Path) -> str | None:
    """The line of a failed start most worth reading: the deepest cause or last error, not a stack frame."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = [_LOG_PREFIX.sub("", _strip_ansi(raw)).strip() for raw in text.splitlines()]
    lines = [line for line in lines if line and not _NOISE.match(line)]
    if not lines:
        return None
    for marker in ("Caused by:", "ERROR", "Exception", "Error"):
        hits = [line for line in lines if marker in line]
        if hits:
            return hits[-1][:300]
    return lines[-1][:300]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock for the duration of the block (released if the process dies)."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _port_free(port: int) -> bool:
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


def _alive(pid: int) -> bool:
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


def _cmdline(pid: int) -> list[str] | None:
    """The process's arguments; None where they cannot be read (no /proc, process gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg]


def _find_process(marker: str) -> int | None:
    """A live Neo4j server process with ``marker`` among its arguments (Linux /proc only)."""
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return None
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        args = _cmdline(pid)
        if args and marker in args and any(cls in args for cls in _MAIN_CLASSES) and _alive(pid):
            return pid
    return None


def _signal_group(pid: int, sig: signal.Signals) -> None:
    # The server leads its own process group (start_new_session); signal the group so nothing
    # it forked survives. If it does not lead a group (started some other way), signal it alone.
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True
