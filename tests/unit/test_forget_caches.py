"""After an erasure nothing outside the store keeps the subject's texts: GraphMem.forget clears
the index's caches and asks the database to flush its transaction logs; the Neo4j index's
cache of vectors by text (and the embedder's) is emptied whole."""

from __future__ import annotations

from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.api import GraphMem
from graphmem.embed import HashingEmbedder


class CountingEmbedder(HashingEmbedder):
    """Counts the texts it really embeds, and its own cache clearings."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []
        self.cleared = 0

    def embed(self, texts):
        self.embedded += list(texts)
        return super().embed(texts)

    def clear_cache(self) -> None:
        self.cleared += 1


class FlushingDatabase:
    flushed = 0

    def flush_erased(self) -> bool:
        self.flushed += 1
        return False

    def close(self) -> None:
        pass


class WatchedIndex(InMemoryIndex):
    cleared = 0

    def clear_cache(self) -> None:
        self.cleared += 1


def test_forget_clears_the_index_cache_and_flushes_the_database():
    store = InMemoryStore()
    index, database = WatchedIndex(store, HashingEmbedder()), FlushingDatabase()
    mem = GraphMem(store, index, database=database)
    mem.remember("My passport number is X123.", "user:alice")
    assert (index.cleared, database.flushed) == (0, 0)
    mem.forget("user:alice")
    assert (index.cleared, database.flushed) == (1, 1)


def test_the_neo4j_index_forgets_every_cached_text():
    embedder = CountingEmbedder()
    index = Neo4jIndex(conn=None, embedder=embedder)  # vectors and the cache need no database
    index.vectors(["My passport number is X123.", "where do I live?"])
    index.vectors(["My passport number is X123."])
    assert embedder.embedded == ["My passport number is X123.", "where do I live?"]  # the second came from the cache
    index.clear_cache()
    assert embedder.cleared == 1
    index.vectors(["My passport number is X123."])
    assert embedder.embedded[-1] == "My passport number is X123."  # embedded again: nothing was kept
