"""``LocalNeo4j``: one local Neo4j Community server, its configuration and its process.

An instance is a folder ``<home>/instances/<port>`` (mode 0700): ``conf/neo4j.conf``,
``data/``, ``logs/console.log``, ``run/neo4j.pid``, its ``password`` and ``store-version``, the
Neo4j that last ran its store. It runs the jars graphmem.server.provision fetched, on
127.0.0.1 only, Bolt only, authentication on (graphmem.server.credentials), LOAD CSV reading
no file and fetching no URL, its transaction logs soon rid of erased values (graphmem.server.conf).

A store written by 5.26 opens in 2026.x, upgraded in place; 5.26 then refuses it, so a start
refuses to run an older Neo4j than the one that last ran the store. docs/operations.md tells it
for users. It is a local development and test database, never a shared one.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, DriverError, Neo4jError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphmem.errors import BackendError, ConfigurationError
from graphmem.server import host
from graphmem.server.conf import jvm_options, neo4j_conf
from graphmem.server.credentials import auth_ini, ensure_password, set_initial_password
from graphmem.server.logs import last_meaningful_line
from graphmem.server.provision import (
    FALLBACK,
    LATEST,
    MAIN_CLASSES,
    VERSION,
    Jars,
    default_version,
    find_java,
    release_line,
    version_key,
)
from graphmem.settings.config import DEFAULT_BOLT_PORT
from graphmem.settings.credentials import INSTANCES, PASSWORD, own_port, read_password
from graphmem.settings.home import default_home
from graphmem.settings.trust import private_dir, private_tree, write_private

__all__ = ["LocalNeo4j", "Status"]

# What instances from before `store-version` existed were run with: the earlier graphmem ran
# only this version, so an unrecorded store was written by it.
_UNRECORDED_STORE = "5.26.30"

_SIZE = re.compile(r"^[1-9][0-9]*[kmg]$")


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
        if not VERSION.fullmatch(value):
            raise ValueError(f"{value!r} is not a Neo4j version like {LATEST} or {FALLBACK}")
        return value

    # ----------------------------------------------------------------------------- paths

    @property
    def uri(self) -> str:
        """The Bolt URI of this server: ``bolt://127.0.0.1:<port>``."""
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def jars(self) -> Jars:
        """The jars this server runs (provisioned by ``start``)."""
        return Jars(self.home, self.version)

    @property
    def instance_dir(self) -> Path:
        return (self.instances_dir or self.home / INSTANCES) / str(self.port)

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
        return self.instance_dir / PASSWORD

    @property
    def password(self) -> str | None:
        """The password of user ``neo4j`` (None before the first start); ConfigurationError
        when another user could have written or may read it."""
        return read_password(self.password_file)

    @property
    def _store_version_file(self) -> Path:
        return self.instance_dir / "store-version"

    # ----------------------------------------------------------------------------- configuration

    def config_text(self) -> str:
        """The neo4j.conf that start() writes (regenerated on every start, so edits do not stick)."""
        return neo4j_conf(port=self.port, heap=self.heap, pagecache=self.pagecache, instance_dir=self.instance_dir)

    def java_command(self, java: str) -> list[str]:
        """The command line start() runs; ``--home-dir`` names the instance, which identifies it."""
        return [
            java,
            *jvm_options(self.heap),
            "-cp",
            f"{self.jars.lib_dir}/*",
            release_line(self.version).main_class,
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
        """Start the server (provisioning it first); return once Bolt accepts its password.

        - ``progress`` gets notes for a human; ``wait_seconds`` counts from the spawn; ``fresh``
          empties the data first. A running instance is waited for.
        - Raises ConfigurationError for what the user must fix (no Java or Maven, a taken port,
          a newer Neo4j's store, a refused password, files another user could change), and
          BackendError when the server exits or does not answer in time (it is then stopped).
        """
        note = progress or (lambda _: None)
        private_dir(self.instance_dir)
        # Holds the password and the data: no other local user may read it. Instances made
        # by the earlier graphmem were created with the default umask, so this is set each time.
        os.chmod(self.instance_dir, 0o700)
        # Serialises concurrent starts of the same instance; the loser finds it running.
        with host.locked(self.instance_dir / ".start.lock"):
            pid = self._running_pid()
            if pid is not None and fresh:
                raise ConfigurationError(f"Neo4j (pid {pid}) is running on {self.uri}; stop it before a fresh start")
            if pid is not None:
                return self._join(pid, wait_seconds, note)
            pid = self._spawn(note, fresh)
            deadline = time.monotonic() + wait_seconds
            try:
                answered = self._wait_for_bolt(pid, deadline)
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

    def _join(self, pid: int, wait_seconds: float, note: Callable[[str], None]) -> Status:
        """The status of this instance's server, running as ``pid``, once it answers."""
        deadline = time.monotonic() + wait_seconds
        if not self.pid_file.is_file() or self.pid_file.read_text().strip() != str(pid):
            write_private(self.pid_file, f"{pid}\n")  # found by its command line: heal
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

    def _spawn(self, note: Callable[[str], None], fresh: bool) -> int:
        """Check the port and the store, provision, write the configuration and the password, and
        spawn the server in its own session; its pid."""
        # Checked before provisioning so a taken port fails fast, not after a download.
        if not host.port_free(self.port):
            raise ConfigurationError(
                f"port {self.port} on 127.0.0.1 is already in use by another process; stop it or choose another --port"
            )
        if fresh:
            shutil.rmtree(self.instance_dir / "data", ignore_errors=True)
            self._store_version_file.unlink(missing_ok=True)
        stored = self._stored_version()
        if stored is not None and version_key(stored) > version_key(self.version):
            raise ConfigurationError(
                f"the store in {self.instance_dir} was written by Neo4j {stored}, which "
                f"{self.version} cannot open: run {stored} (it needs {release_line(stored).javas}; "
                "--neo4j-version) or start over with --fresh (deletes this instance's data)"
            )
        if not self.jars.provisioned:
            note(
                f"first start: provisioning Neo4j {self.version} into {self.jars.dist_dir} "
                "(Maven downloads ~150 MB; about a minute)..."
            )
        self.jars.provision()
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
        write_private(self.conf_file, self.config_text())
        created = ensure_password(self.password_file)
        if created or not auth_ini(self.instance_dir).is_file():
            set_initial_password(java, self.jars.lib_dir, self.instance_dir, self.conf_file.parent, self.password or "")
        write_private(self._store_version_file, f"{self.version}\n")
        if self.console_log.exists():  # keep the previous run's output for one more start
            os.replace(self.console_log, self.console_log.with_suffix(".log.1"))
        private_tree(self.instance_dir)
        with host.open_private(self.console_log) as console:
            proc = subprocess.Popen(
                self.java_command(java.path),
                cwd=self.instance_dir,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                # Its own session: outlives this process and the terminal, and its process
                # group can be signalled as a whole by stop().
                start_new_session=True,
                umask=host.PRIVATE_UMASK,
            )
        host.adopt(proc)
        write_private(self.pid_file, f"{proc.pid}\n")
        return proc.pid

    def stop(self, timeout: float = 60) -> bool:
        """Stop the server: SIGTERM its process group, SIGKILL after ``timeout`` seconds.

        Returns True if a running server was stopped, False if none was running (a stale pid
        file is removed either way).
        """
        pid = self._running_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        host.signal_group(pid, signal.SIGTERM)
        if not host.wait_gone(pid, timeout):
            host.signal_group(pid, signal.SIGKILL)
            host.wait_gone(pid, 10)
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
            port_in_use=pid is None and not host.port_free(self.port),
        )

    # ----------------------------------------------------------------------------- internals

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
        if pid is not None and host.alive(pid):
            # Pids are reused: make sure the process is the server of *this* instance folder.
            # An empty command line means "cannot tell" (a process in the middle of exec shows
            # none for a moment, right after start() spawned it), so the pid file is trusted.
            args = host.cmdline(pid)
            if not args or marker in args:
                return pid
        return host.find_process(marker, MAIN_CLASSES)

    def _wait_for_bolt(self, pid: int, deadline: float) -> bool:
        """Poll Bolt until it accepts the password (True) or ``deadline`` passes (False).

        Raises BackendError if the process exits first, with the last meaningful log line, and
        ConfigurationError if the server refuses the password.
        """
        with GraphDatabase.driver(self.uri, auth=self._auth(), connection_timeout=2.0, resolver=own_port) as driver:
            while True:
                if not host.alive(pid):
                    self.pid_file.unlink(missing_ok=True)
                    exit_code = host.exit_code(pid)
                    code = f" (exit code {exit_code})" if exit_code is not None else ""
                    line = last_meaningful_line(self.console_log)
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
