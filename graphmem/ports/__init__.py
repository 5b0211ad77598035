"""The ports: small Protocols the pipelines depend on, each with its written contract.

- ``store``: the store, split by concern (``EpisodeStore``, ``UnitStore``, ...), and
  ``MemoryStore``, all of them;
- ``index``: ``MemoryIndex``, search over units, derived and rebuildable;
- ``database``: ``Database``, the server and schema as an operator checks them;
- ``services``: ``MemoryPolicy``, ``Embedder``, ``Reranker``, ``Extractor``, ``TokenCounter``;
- ``records``: the records an export holds.

The adapters (``graphmem.adapters``) implement the store and the index on Neo4j and in memory.
``tests/contract`` runs the same tests on both, and checks that each adapter has every method of
its port with the port's signature.
"""

from graphmem.ports.database import Database
from graphmem.ports.index import MemoryIndex
from graphmem.ports.records import Record, each, of
from graphmem.ports.services import Embedder, Extractor, MemoryPolicy, Reranker, TokenCounter, query_prefix
from graphmem.ports.store import (
    AuditStore,
    BlockStore,
    EpisodeStore,
    ErasureStore,
    ExchangeStore,
    JobStore,
    KeyStore,
    MemoryStore,
    ReviewStore,
    TimelineStore,
    UnitStore,
)

__all__ = [
    "AuditStore",
    "BlockStore",
    "Database",
    "Embedder",
    "EpisodeStore",
    "ErasureStore",
    "ExchangeStore",
    "Extractor",
    "JobStore",
    "KeyStore",
    "MemoryIndex",
    "MemoryPolicy",
    "MemoryStore",
    "Record",
    "Reranker",
    "ReviewStore",
    "TimelineStore",
    "TokenCounter",
    "UnitStore",
    "each",
    "of",
    "query_prefix",
]
