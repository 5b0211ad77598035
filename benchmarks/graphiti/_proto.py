"""What both workers share (stdlib + numpy only, so it imports in either Python).

Protocol: run.py writes one JSON object per line on a worker's stdin and reads one JSON object
per line from its stdout. Workers move their own sys.stdout to stderr first, so a library that
prints cannot corrupt the channel.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np


def open_channel():
    """(reader, writer) for the protocol; afterwards print() goes to stderr."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return sys.stdin, out


def serve(handlers: dict[str, Callable[[dict], dict]]) -> None:
    reader, writer = open_channel()
    for line in reader:
        msg = json.loads(line)
        op = msg.pop("op")
        try:
            reply = handlers[op](msg)
        except Exception as exc:  # reported to run.py, which stops the run
            import traceback

            traceback.print_exc()
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        writer.write(json.dumps(reply) + "\n")
        if op == "quit":
            return


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    """This process's own peak RSS. Not getrusage's ru_maxrss: on Linux that survives fork and
    exec, so a worker would report run.py's peak (the MiniLM model) when it exceeds its own."""
    return _status_mb("VmHWM:")


def current_rss_mb() -> float:
    return _status_mb("VmRSS:")


def rusage_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class VectorTable:
    """Precomputed vectors by exact text; misses go to ``fallback`` (and are counted)."""

    def __init__(self, texts_path: str, vectors_path: str, name: str, fallback=None):
        with open(texts_path, encoding="utf-8") as file:
            texts = json.load(file)
        self.vectors = np.load(vectors_path, mmap_mode="r")
        self.row = {t: i for i, t in enumerate(texts)}
        self.name = name
        self.dimension = int(self.vectors.shape[1])
        self.fallback = fallback
        self.hits = 0
        self.misses = 0

    def embed(self, texts) -> list[list[float]]:
        out = []
        for text in texts:
            i = self.row.get(text)
            if i is None:
                self.misses += 1
                if self.fallback is None:
                    raise KeyError(f"no precomputed vector for {text!r}")
                out.append(self.fallback.embed([text])[0])
            else:
                self.hits += 1
                out.append(self.vectors[i].tolist())
        return out


def read_facts(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file]


OCCURRED = datetime(2024, 1, 1, tzinfo=UTC)  # when every fact's episode was told


def episode_text(fact: dict) -> str:
    """The episode a fact comes from, as both systems store it (its provenance)."""
    until = f" to {fact['b']}" if fact["b"] is not None else ""
    return f"{fact['s']} played for {fact['o']} from {fact['a']}{until}"


def years(fact: dict) -> tuple[datetime, datetime | None]:
    """valid_at = 1 Jan of the first year; invalid_at = 1 Jan after the last year (None: open)."""
    valid = datetime(fact["a"], 1, 1, tzinfo=UTC)
    invalid = datetime(fact["b"] + 1, 1, 1, tzinfo=UTC) if fact["b"] is not None else None
    return valid, invalid
