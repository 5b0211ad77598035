"""Fixtures of the tests that run Neo4j statements against their references."""

from __future__ import annotations

import pytest

from graphmem import GraphMem
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore


@pytest.fixture(scope="module")
def index_mem(conn, embedder):
    """A GraphMem on the test server's store and index (its index reachable as ``.index``)."""
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    mem = GraphMem(Neo4jStore(conn), index)
    yield mem
    mem.usage.close()
