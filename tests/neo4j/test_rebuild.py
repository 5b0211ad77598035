"""Switching embedders: start-up refuses the mismatch with a clear message, and `index
rebuild` gives the same search results as a fresh ingest with the new embedder."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphmem import GraphMem, Settings
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.cli.main import app
from graphmem.domain.fusion import TIE
from graphmem.embed import HashingEmbedder
from graphmem.errors import ConfigurationError, IndexMismatch

pytestmark = pytest.mark.neo4j

TEXTS = [
    f"{who} {verb} {what}"
    for who in ("Alice", "Bob", "Carol", "Dan")
    for verb in ("likes", "sells", "paints")
    for what in ("boats", "tea", "jazz", "maps", "chess")
]
QUERIES = ["who likes tea", "boats for sale", "painting maps", "Carol jazz", "chess"]


def wipe(conn: Neo4jConnection) -> None:
    with conn.driver.session() as session:
        session.run("MATCH (n) DETACH DELETE n").consume()
        for row in session.run("SHOW INDEXES YIELD name, type WHERE type = 'VECTOR' RETURN name").data():
            session.run(f"DROP INDEX {row['name']}").consume()  # test cleanup: names come from the server
    conn.migrate()


#: Every GraphMem a test opened: closed (their recall statistics written) before the connection.
OPENED: list[GraphMem] = []


def open_mem(conn: Neo4jConnection, dim: int) -> GraphMem:
    index = Neo4jIndex(conn, HashingEmbedder(dim))
    index.ensure()
    OPENED.append(GraphMem(Neo4jStore(conn), index))
    return OPENED[-1]


def close(conn: Neo4jConnection) -> None:
    while OPENED:
        OPENED.pop().close()
    conn.close()


def results(mem: GraphMem) -> list[dict[str, float]]:
    """Every unit's score per query, by content (unit ids, which break ties in recall, differ
    between two ingests)."""
    return [
        {h.unit.content: h.score for h in mem.recall(q, "user:rebuild", k=len(TEXTS), mode="semantic")} for q in QUERIES
    ]


def same(a: list[dict[str, float]], b: list[dict[str, float]]) -> bool:
    """The same units with the same scores, to the float32 precision Neo4j scores vectors in
    (graphmem.domain.fusion.TIE): its SIMD code rounds differently as the server's JIT warms up."""
    return all(x.keys() == y.keys() and all(abs(x[c] - y[c]) <= TIE for c in x) for x, y in zip(a, b))


def test_rebuild_after_switching_embedders_equals_a_fresh_ingest(spare_server):
    conn = Neo4jConnection(Settings.from_env(neo4j_uri=spare_server.uri))
    try:
        wipe(conn)
        old = open_mem(conn, 64)
        for text in TEXTS:
            old.remember(text, "user:rebuild", extractor="none")
        before = results(old)
        with pytest.raises(IndexMismatch, match="graphmem index rebuild"):
            Neo4jIndex(conn, HashingEmbedder(128)).ensure()

        env = {"NEO4J_URI": spare_server.uri, "GRAPHMEM_EMBEDDER": "hashing"}  # hashing-256 now
        status = CliRunner().invoke(app, ["index", "status", "--json"], env=env)
        assert json.loads(status.stdout)["dimension"] == 64
        rebuilt = CliRunner().invoke(app, ["index", "rebuild", "--json"], env=env)
        assert rebuilt.exit_code == 0, rebuilt.output
        after = json.loads(CliRunner().invoke(app, ["index", "status", "--json"], env=env).stdout)
        assert (after["model"], after["dimension"]) == ("hashing-256", 256)
        rebuilt_results = results(open_mem(conn, 256))
        assert not same(rebuilt_results, before)  # a different model ranks differently...

        wipe(conn)
        fresh = open_mem(conn, 256)
        for text in TEXTS:
            fresh.remember(text, "user:rebuild", extractor="none")
        assert same(rebuilt_results, results(fresh))  # ...exactly as a fresh ingest with it does
    finally:
        close(conn)


def test_an_interrupted_model_switch_leaves_the_live_index_serving(spare_server):
    """A rebuild to another model builds aside: stopped halfway, the old model still answers,
    writes and the new model are refused with what to run, `doctor` says so, and running the
    rebuild again finishes the switch."""
    conn = Neo4jConnection(Settings.from_env(neo4j_uri=spare_server.uri))
    try:
        wipe(conn)
        old = open_mem(conn, 64)
        for text in TEXTS:
            old.remember(text, "user:switch", extractor="none")
        before = results_for(old, "user:switch")
        new_index = Neo4jIndex(conn, HashingEmbedder(128))
        new_index.batch_size = 10

        def stop_halfway(done: int) -> None:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            new_index.rebuild(progress=stop_halfway)
        assert results_for(old, "user:switch") == before  # the live generation still serves
        with pytest.raises(IndexMismatch, match="did not finish"):
            Neo4jIndex(conn, HashingEmbedder(128)).ensure()
        with pytest.raises(ConfigurationError, match="rebuild"):
            old.remember("a write during the switch", "user:switch", extractor="none")
        env = {"NEO4J_URI": spare_server.uri, "GRAPHMEM_EMBEDDER": "hashing"}
        doctor = CliRunner().invoke(app, ["doctor", "--json"], env=env)
        assert doctor.exit_code == 1 and "rebuild" in doctor.stdout

        assert new_index.rebuild() == len(TEXTS) - new_index.batch_size  # resumed: only the rest
        switched = open_mem(conn, 128)
        assert results_for(switched, "user:switch") != before
        assert len(switched.recall("tea", "user:switch", k=100, mode="semantic")) == len(TEXTS)
    finally:
        close(conn)


def results_for(mem: GraphMem, subject: str) -> list[list[tuple[float, str]]]:
    return [
        sorted((-round(h.score, 9), h.unit.content) for h in mem.recall(q, subject, k=len(TEXTS), mode="semantic"))
        for q in QUERIES
    ]
