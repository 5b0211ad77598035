"""Every benchmark script takes ``--json`` (its last stdout line is then one JSON object), so
runs can be compared by scripts: checked on each script's own ``--help``, as a user meets it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(
    p for p in [*BENCHMARKS.glob("*.py"), BENCHMARKS / "graphiti" / "run.py"] if not p.name.startswith("_")
)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(BENCHMARKS).as_posix())
def test_every_benchmark_takes_json(script: Path) -> None:
    shown = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=BENCHMARKS.parent
    )
    assert shown.returncode == 0, shown.stderr
    assert "--json" in shown.stdout
