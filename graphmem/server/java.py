"""The Java installations on this machine: ``$JAVA_HOME``, the system's JVM folder, ``java`` on PATH.

Neo4j's versions differ in the Java they run on (graphmem.server.provision picks one by what is
installed), so every runnable Java is listed with its major version, not just the first found.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Java", "installed_javas", "JVM_DIR"]

JVM_DIR = Path("/usr/lib/jvm")
"""Where Debian's and Ubuntu's JDK packages (and Temurin's) install, one folder per JDK."""


@dataclass(frozen=True)
class Java:
    """One runnable ``java`` executable and its major version (17, 21, 25...)."""

    path: str
    major: int


def installed_javas() -> list[Java]:
    """Every Java that runs, each once: ``$JAVA_HOME/bin/java``, then ``JVM_DIR/*/bin/java``
    in name order, then ``java`` on PATH. The same executable reached by two routes (the
    symlinks Debian keeps under JVM_DIR, PATH's ``/usr/bin/java``) is listed at its first.
    """
    candidates: list[Path] = []
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidates.append(Path(java_home) / "bin" / "java")
    if JVM_DIR.is_dir():
        candidates.extend(sorted(folder / "bin" / "java" for folder in JVM_DIR.iterdir()))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path))
    found: list[Java] = []
    seen: set[str] = set()
    for path in candidates:
        if not os.access(path, os.X_OK):
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        major = _probe(str(path))
        if major is not None:
            found.append(Java(str(path), major))
    return found


def _probe(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return java_major(out.stderr + out.stdout)


def java_major(version_output: str) -> int | None:
    """The major version in ``java -version`` output, e.g. ``openjdk version "17.0.15"`` -> 17
    (and ``"1.8.0_392"``, the pre-Java-9 spelling, -> 8); None when there is none."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if m is None:
        return None
    first = int(m.group(1))
    return int(m.group(2) or 0) if first == 1 else first
