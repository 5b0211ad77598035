"""Shared fixtures. Tests on Neo4j use the server named by NEO4J_URI (default: the local one
that `graphmem db start` / .ci/run starts) and isolate themselves by fresh scopes, so they
never depend on each other or on an empty database.

Everything that needs the server carries the ``neo4j`` mark, so ``pytest -m "not neo4j"`` runs
with none: the Neo4j half of each adapter-parametrised fixture is marked, and a test that asks
for ``conn`` is marked at collection.
"""

from __future__ import annotations

import os
import uuid

import pytest
from hypothesis import settings as hypothesis_settings

from graphmem.adapters.memory import InMemoryStore
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.domain.models import Scope
from graphmem.errors import Unavailable
from graphmem.settings.config import Settings
from tests.examples import CI_EXAMPLES, DEV_EXAMPLES

# The property tests' example counts: "ci" (scripts/test) runs today's numbers, "dev" (the default
# for a local pytest) a fifth of them; tests that set their own count take it through examples().
hypothesis_settings.register_profile("ci", max_examples=CI_EXAMPLES)
hypothesis_settings.register_profile("dev", max_examples=DEV_EXAMPLES)
hypothesis_settings.load_profile(os.environ.get("GRAPHMEM_HYPOTHESIS_PROFILE", "dev"))

NEO4J = pytest.param("neo4j", marks=pytest.mark.neo4j)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "conn" in getattr(item, "fixturenames", ()) and item.get_closest_marker("neo4j") is None:
            item.add_marker(pytest.mark.neo4j)


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings.from_env(embedder=os.environ.get("GRAPHMEM_EMBEDDER", "hashing"))


@pytest.fixture(scope="session")
def conn(settings: Settings):
    connection = Neo4jConnection(settings)
    try:
        connection.migrate()
    except Unavailable as exc:  # pragma: no cover - environment problem, not a test result
        pytest.fail(f"Neo4j is required for these tests: {exc}")
    yield connection
    connection.close()


@pytest.fixture(params=["memory", NEO4J])
def store(request):
    """Every MemoryStore adapter, for the contract suite."""
    if request.param == "memory":
        return InMemoryStore()
    return Neo4jStore(request.getfixturevalue("conn"))


def fresh_scope(kind: str = "user", project: str | None = None) -> Scope:
    return Scope.parse(f"{kind}:{uuid.uuid4().hex[:12]}", project)


@pytest.fixture
def scope() -> Scope:
    return fresh_scope()


@pytest.fixture(scope="session")
def embedder():
    from graphmem.embed import HashingEmbedder

    return HashingEmbedder()


@pytest.fixture(params=["memory", NEO4J])
def store_and_index(request, embedder):
    """A (store, index) pair of each adapter family, for the index contract suite."""
    from graphmem.adapters.memory import InMemoryIndex
    from graphmem.adapters.neo4j.index import Neo4jIndex

    if request.param == "memory":
        store = InMemoryStore()
        return store, InMemoryIndex(store, embedder)
    conn = request.getfixturevalue("conn")
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    return Neo4jStore(conn), index


@pytest.fixture(params=["memory", NEO4J])
def mem(request, embedder):
    """A GraphMem over each adapter family (hashing embedder: fast, deterministic); on Neo4j
    with its database (never closed here: the session shares the connection). Its recall
    statistics are written at teardown, while the connection is still open."""
    from graphmem import GraphMem
    from graphmem.adapters.memory import InMemoryIndex
    from graphmem.adapters.neo4j.admin import Neo4jDatabase
    from graphmem.adapters.neo4j.index import Neo4jIndex

    if request.param == "memory":
        store = InMemoryStore()
        yield GraphMem(store, InMemoryIndex(store, embedder))
        return
    conn = request.getfixturevalue("conn")
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    mem = GraphMem(Neo4jStore(conn), index, database=Neo4jDatabase(conn, index))
    yield mem
    mem.usage.close()


@pytest.fixture
def memory_mem(embedder):
    """A GraphMem over the in-memory adapters only (the faces' tests)."""
    from graphmem import GraphMem
    from graphmem.adapters.memory import InMemoryIndex

    store = InMemoryStore()
    return GraphMem(store, InMemoryIndex(store, embedder))


@pytest.fixture(scope="session")
def spare_server():
    """A second local Neo4j of our own, for tests that stop the server or change the whole
    database's embedding model. Started once per session, stopped and deleted at the end.

    Its instance folder is the usual one, ``<GRAPHMEM_HOME>/instances/<port>``, so every
    connection to its URI (the CLI in a subprocess too) finds its password there."""
    import shutil

    from graphmem.server.local import LocalNeo4j
    from tests.ports import free_port

    server = LocalNeo4j(port=free_port(), heap="1g", pagecache="256m")
    server.start(fresh=True)  # the port is free, so any folder left for it is a dead run's
    yield server
    server.stop()
    shutil.rmtree(server.instance_dir, ignore_errors=True)
