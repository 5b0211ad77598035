"""Shared helpers for the benchmark scripts (not part of the library).

BENCHMARK-ONLY RAW CYPHER: the statements below are inline on purpose. They are used only by
benchmarks to reset a dedicated benchmark database; library Cypher lives in cypher/.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.queries import load
from graphmem.settings.config import Settings

#: Benchmark-only: delete every node, in batches (auto-commit transaction required).
RAW_WIPE_ALL = "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
#: Benchmark-only: the vector indexes to drop (their dimension is the embedder's).
RAW_VECTOR_INDEXES = "SHOW INDEXES YIELD name, type WHERE type = 'VECTOR' RETURN name"


def default_uri() -> str:
    return os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7691")


def wipe(uri: str) -> None:
    """Empty the benchmark database: all nodes, and the vector indexes (their dimension is
    the embedder's, so a new embedder needs new ones). Migrations are re-applied after."""
    conn = Neo4jConnection(Settings.from_env(neo4j_uri=uri))
    try:
        with conn.driver.session(database=conn.database) as session:
            session.run(RAW_WIPE_ALL).consume()
            names = [r["name"] for r in session.run(RAW_VECTOR_INDEXES).data()]
        for name in names:
            conn.schema(load("index/drop_vector_index").render(index=name), what="drop vector index")
        conn.migrate()
    finally:
        conn.close()


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    s = sorted(values)
    if not s:
        return float("nan")
    idx = max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[idx]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def timed(fn):
    """(milliseconds, result) of one call."""
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def vocabulary(seed: int, size: int = 3000) -> list[str]:
    """Random pseudo-words (4-8 letters) for generated benchmark texts."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return sorted({"".join(rng.choice(letters, size=rng.integers(4, 9))) for _ in range(size)})
