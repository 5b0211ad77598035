"""The line of Maven's or Neo4j's log most worth showing when a download or a start fails."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["first_maven_error", "last_meaningful_line"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+[+-]\d{4} +")
_NOISE = re.compile(r"^(at |\.\.\. \d+ more|Suppressed:)")


def first_maven_error(log: Path) -> str | None:
    """The first ``[ERROR]`` line of a Maven log, without its prefix."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        line = _ANSI.sub("", line).strip()
        if line.startswith("[ERROR]") and len(line) > len("[ERROR] "):
            return line[len("[ERROR] ") :][:200]
    return None


def last_meaningful_line(log: Path) -> str | None:
    """The line of a failed start most worth reading: the deepest cause or last error, not a stack frame."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = [_LOG_PREFIX.sub("", _ANSI.sub("", raw)).strip() for raw in text.splitlines()]
    lines = [line for line in lines if line and not _NOISE.match(line)]
    if not lines:
        return None
    for marker in ("Caused by:", "ERROR", "Exception", "Error"):
        hits = [line for line in lines if marker in line]
        if hits:
            return hits[-1][:300]
    return lines[-1][:300]
