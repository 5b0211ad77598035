"""A bulk load into a database with no search entry builds the vector index once after the data
(``MemoryIndex.loading``): absent while the load writes, online when it returns, and online
again when the load fails. Its own server: the shared test database always holds entries."""

from __future__ import annotations

import io
import json

import pytest

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.domain.models import Fact, Scope
from graphmem.embed import HashingEmbedder
from graphmem.faces.episode_lines import ExportFile
from graphmem.server import LocalNeo4j
from graphmem.settings.config import Settings
from graphmem.settings.home import default_home
from tests.ports import free_port

pytestmark = pytest.mark.neo4j

#: Raw Cypher, test only: the states of the vector indexes.
VECTOR_INDEXES = "SHOW VECTOR INDEXES YIELD state RETURN state"
WIPE = "MATCH (n) DETACH DELETE n"


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    server = LocalNeo4j(
        home=default_home(), instances_dir=home / "instances", port=free_port(), heap="512m", pagecache="128m"
    )
    server.start(wait_seconds=180)
    conn = Neo4jConnection(Settings(neo4j_uri=server.uri, home=home, embedder="hashing"))
    conn.migrate()
    index = Neo4jIndex(conn, HashingEmbedder())
    index.ensure()
    memory = GraphMem(Neo4jStore(conn), index)
    yield memory
    memory.close()
    server.stop(timeout=20)


def export_of(subject: str) -> ExportFile:
    store = InMemoryStore()
    told = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
    for city in ("Oslo", "Rome", "Kyiv"):
        told.remember(f"Zed lives in {city}.", subject, facts=[Fact(subject="Zed", predicate="lives_in", object=city)])
    lines = "".join(json.dumps(record) + "\n" for record in told.export(subject))
    return ExportFile(io.BytesIO(lines.encode()), "export.jsonl")


def states(mem: GraphMem) -> list[str]:
    conn = mem.store.conn
    records, _, _ = conn.driver.execute_query(VECTOR_INDEXES, database_=conn.database)
    return [r["state"] for r in records]


def test_the_vector_index_is_built_after_a_load_into_a_database_without_entries(mem):
    seen: list[list[str]] = []
    mem.import_(export_of("user:zed"), bulk=True, progress=lambda n: seen.append(states(mem)))
    assert seen and all(s == [] for s in seen)  # left out while the load wrote
    assert states(mem) == ["ONLINE"]
    assert [hit.unit.content for hit in mem.recall("Zed lives in Kyiv", "user:zed", mode="semantic")][:1] == [
        "Zed lives in Kyiv"
    ]
    # With entries stored, another subject's load writes into the index as it goes.
    seen.clear()
    mem.import_(export_of("user:amy"), bulk=True, progress=lambda n: seen.append(states(mem)))
    assert seen and all(s == ["ONLINE"] for s in seen)


def test_a_failed_load_leaves_the_vector_index_online(mem):
    mem.store.conn.driver.execute_query(WIPE, database_=mem.store.conn.database)

    def broken(n: int) -> None:
        if n:  # the first write's records
            raise RuntimeError("the load broke")

    with pytest.raises(RuntimeError, match="the load broke"):
        mem.import_(export_of("user:eve"), bulk=True, progress=broken)
    assert states(mem) == ["ONLINE"]
    # Searchable again (no missing index); the write that broke held entities only.
    assert mem.recall("Zed lives in Kyiv", Scope.parse("user:eve"), mode="semantic") == []
