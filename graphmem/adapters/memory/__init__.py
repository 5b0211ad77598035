"""The in-memory adapters: ``InMemoryStore`` and ``InMemoryIndex``, twins of the Neo4j ones for
fast tests, run through the same contract suite (``tests/contract``)."""

from graphmem.adapters.memory.index import InMemoryIndex, bm25
from graphmem.adapters.memory.store import InMemoryStore

__all__ = ["InMemoryIndex", "InMemoryStore", "bm25"]
