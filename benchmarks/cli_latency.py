"""Wall time of warm `graphmem recall` and `graphmem remember`, as a user runs them: each a new
process of the installed `graphmem` command, on a subject of N units.

    flock /tmp/graphmem-bench.lock python benchmarks/cli_latency.py --uri bolt://127.0.0.1:7800 [--json]

Seeds the subject (default ``user:cli-bench``) with N single-fact episodes through
``graphmem ingest`` when it holds fewer units; nothing else in the database is touched. Each
command runs once untimed (the warm-up: files in the page cache, model weights prepared), then
``--runs`` times; min and median wall milliseconds are printed, with the machine's load average
at the start and the end (the machine is shared: read figures beside its load), and the CPU
time (user + system) of each, which a busy machine's wall time hides. The embedder is
the setting's (default MiniLM). The last stdout line is JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, vocabulary

COMMAND = str(Path(sys.executable).with_name("graphmem"))


def graphmem(env: dict[str, str], *args: str) -> str:
    """Run one `graphmem` command; its stdout, or exit with its stderr when it fails."""
    done = subprocess.run([COMMAND, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"graphmem {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def held_units(env: dict[str, str], subject: str) -> int:
    rows = json.loads(graphmem(env, "subjects", "--json"))["subjects"]
    return next((row["units"] for row in rows if row["scope"] == subject and not row["project"]), 0)


def seed(env: dict[str, str], subject: str, units: int) -> int:
    """Ingest single-fact episodes until the subject holds at least ``units`` units; how many it holds."""
    current = held_units(env, subject)
    if current >= units:
        return current
    words = vocabulary(seed=7)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as out:
        for n in range(current, units):
            thing, place = words[n % len(words)], words[(n * 7 + 3) % len(words)]
            content = f"{thing} {n} is kept in {place}"
            fact = {"subject": f"item {n}", "predicate": "kept_in", "object": place, "content": content}
            episode = {"id": f"cli-bench-{n}", "subject": subject, "occurred_at": "2026-01-01T00:00:00Z"}
            out.write(json.dumps({**episode, "raw": f"the {thing} {n} is kept in {place}", "facts": [fact]}) + "\n")
    try:
        graphmem(env, "ingest", out.name, "--json")
    finally:
        os.unlink(out.name)
    return held_units(env, subject)


def timed(env: dict[str, str], runs: int, args_of) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) milliseconds of ``runs`` runs after one untimed warm-up;
    ``args_of(i)`` gives run i's arguments. CPU time says what a busy machine's wall time hides."""
    graphmem(env, *args_of(-1))
    wall, cpu = [], []
    for i in range(runs):
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        graphmem(env, *args_of(i))
        wall.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return wall, cpu


def summary(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {
        "min_ms": round(min(wall), 1),
        "median_ms": round(statistics.median(wall), 1),
        "cpu_min_ms": round(min(cpu), 1),
        "cpu_median_ms": round(statistics.median(cpu), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--subject", default="user:cli-bench")
    ap.add_argument("--units", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    env = {**os.environ, "NEO4J_URI": args.uri}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # warm means compiled once, as on a user's machine
    load_before = os.getloadavg()
    units = seed(env, args.subject, args.units)
    stamp, subject = time.time_ns(), args.subject
    figures = {
        "recall": timed(env, args.runs, lambda i: ("recall", f"where is item {i % 50} kept", "-s", args.subject)),
        "remember": timed(
            env, args.runs, lambda i: ("remember", f"Run {stamp} note {i}: the lamp is in the attic.", "-s", subject)
        ),
    }
    load_after = os.getloadavg()
    result = {
        "benchmark": "cli_latency",
        "embedder": env.get("GRAPHMEM_EMBEDDER", "minilm"),
        "units": units,
        "runs": args.runs,
        "load_average": {"before": list(load_before), "after": list(load_after)},
        "cpus": os.cpu_count(),
        "commands": {name: summary(*times) for name, times in figures.items()},
    }
    for name, row in result["commands"].items():
        print(
            f"{name:9} wall min {row['min_ms']:7.1f} ms, median {row['median_ms']:7.1f} ms; "
            f"cpu min {row['cpu_min_ms']:7.1f} ms, median {row['cpu_median_ms']:7.1f} ms "
            f"({args.runs} runs, {units} units)"
        )
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} on {os.cpu_count()} CPUs")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
