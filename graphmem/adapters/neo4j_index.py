"""MemoryIndex on Neo4j's own indexes: HNSW vector indexes and Lucene fulltext.

Scope guarantee. Neo4j 5.26 cannot filter inside a vector query, so a scoped search
1. a scope of at most ``exact_threshold`` searchable units gets exact cosine over the scope
   alone (a 5-unit scope among 100k others gets its 5 best hits) — one round trip;
2. a larger scope over-fetches from the HNSW index in proportion to its share of the index and
   keeps its own hits, doubling until k hits or the index runs dry, and falls back to the
   exact scan if the fetch would read the whole index.
Scope sizes are cached for ``SIZE_TTL`` seconds: they only choose the strategy.
Fulltext needs none of this: each unit's scope token is indexed beside its text and the Lucene
query requires it, so Lucene itself returns only the scope's best matches.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from ..cypher import load
from ..errors import IndexMismatch
from ..models import Hit, MemoryUnit, Scope, search_terms, utcnow, words
from ..ports import Embedder
from .neo4j_driver import Neo4jConnection

#: Lucene refuses queries with more than 1024 clauses; a query never needs this many words.
MAX_QUERY_WORDS = 64

#: Seconds a scope's size is trusted for choosing between exact scan and HNSW over-fetch.
SIZE_TTL = 30.0

Progress = Callable[[int], None]


def lucene_query(terms: Sequence[str], scope: Scope, fields: Sequence[str]) -> str | None:
    """Plain words (from ``words`` or ``search_terms``) as a Lucene query restricted to
    ``scope``; None when there are none.

    Words are ``\\w+`` runs, lower-cased, so no user character can reach Lucene syntax
    (quotes, colons, parentheses, backslashes, AND/OR/NOT operators) and nothing can raise.
    """
    unique = list(dict.fromkeys(terms))[:MAX_QUERY_WORDS]
    if not unique:
        return None
    joined = " ".join(unique)
    clauses = " ".join(f"{field}:({joined})" for field in fields)
    return f"+scope_token:{scope.token} +({clauses})"


class Neo4jIndex:
    """MemoryIndex on Neo4j (see ``graphmem.ports.MemoryIndex``)."""

    def __init__(
        self,
        conn: Neo4jConnection,
        embedder: Embedder,
        exact_threshold: int = 5_000,
        batch_size: int = 1_000,
    ):
        self.conn = conn
        self.embedder = embedder
        self.exact_threshold = exact_threshold
        self.batch_size = batch_size
        # scope key -> (searchable units in scope, in the database, when read). Only picks the
        # search strategy: a stale size costs speed, never correctness.
        self._sizes: dict[str, tuple[int, int, float]] = {}
        self._last_query: tuple[str, list[float]] | None = None

    # -- model bookkeeping ----------------------------------------------------------------
    def stored_model(self) -> tuple[str, int] | None:
        rows = self.conn.read("index/get_model")
        return (rows[0]["model"], rows[0]["dimension"]) if rows else None

    def ensure(self) -> None:
        """Create the vector indexes for this embedder on a fresh database, or check that the
        stored model matches. Raises ``IndexMismatch`` telling the operator to rebuild."""
        stored = self.stored_model()
        mine = (self.embedder.name, self.embedder.dimension)
        if stored is None:
            existing = self.vector_dimension()
            if existing is not None and existing != mine[1]:
                raise IndexMismatch(
                    f"a {existing}-dimension vector index exists with no recorded model, but the "
                    f"embedder {mine[0]} has {mine[1]} dims: run `graphmem index rebuild`"
                )
            self._create_vector_indexes()
            self.conn.write("index/set_model", model=mine[0], dimension=mine[1], at=utcnow())
        elif tuple(stored) != mine:
            raise IndexMismatch(
                f"the index was built with {stored[0]} ({stored[1]} dims) but the embedder is "
                f"{mine[0]} ({mine[1]} dims): run `graphmem index rebuild`"
            )

    def vector_dimension(self) -> int | None:
        rows = self.conn.read("index/vector_dimension")
        return rows[0]["dimension"] if rows else None

    def _create_vector_indexes(self) -> None:
        for name in ("index/create_unit_vector_index", "index/create_entity_vector_index"):
            self.conn.schema(load(name).render(dimensions=self.embedder.dimension), what=name)
        self.conn.schema(load("admin/await_indexes").text, what="awaiting indexes")

    # -- writes ---------------------------------------------------------------------------
    def upsert(self, units: Sequence[MemoryUnit]) -> None:
        for start in range(0, len(units), self.batch_size):
            chunk = units[start : start + self.batch_size]
            self._embed_units([(u.id, u.content) for u in chunk])
            names = self.conn.read("index/entities_to_embed", unit_ids=[u.id for u in chunk])
            self._embed_entities([(r["id"], r["name"]) for r in names])

    def _embed_units(self, rows: list[tuple[str, str]]) -> None:
        if rows:
            vectors = self.embedder.embed([text for _, text in rows])
            payload = [{"id": i, "embedding": v} for (i, _), v in zip(rows, vectors)]
            self.conn.write("index/set_unit_embeddings", rows=payload)

    def _embed_entities(self, rows: list[tuple[str, str]]) -> None:
        if rows:
            vectors = self.embedder.embed([name for _, name in rows])
            payload = [{"id": i, "embedding": v} for (i, _), v in zip(rows, vectors)]
            self.conn.write("index/set_entity_embeddings", rows=payload)

    def remove(self, scope: Scope, unit_ids: Sequence[str]) -> None:
        self.conn.write("index/remove_units", scope=scope.key, ids=list(unit_ids))

    # -- search ---------------------------------------------------------------------------
    def search_semantic(self, query: str, scope: Scope, k: int) -> list[Hit]:
        # Recall asks again with a larger k for the same query: embed it once.
        last = self._last_query
        if last is None or last[0] != query:
            last = self._last_query = (query, self.embedder.embed([query])[0])
        return self.search_vector(last[1], scope, k)

    def search_semantic_many(self, queries: Sequence[str], scope: Scope, k: int) -> list[list[Hit]]:
        """``search_semantic`` for many queries, embedded in one batch."""
        return [self.search_vector(v, scope, k) for v in self.embedder.embed(list(queries))]

    def search_vector(self, vector: Sequence[float], scope: Scope, k: int) -> list[Hit]:
        """Scoped semantic search for an already embedded query (see the module docstring)."""
        if k <= 0:
            return []
        in_scope, total = self._scope_size(scope)
        if in_scope <= self.exact_threshold:
            return self._exact(vector, scope, k)
        # Expected hits = fetch * share: aim for twice k, then double while short.
        fetch = max(4 * k, 40, int(2 * k * total / max(in_scope, 1)))
        while fetch < total:
            hits, dry = self._overfetch(vector, scope, k, fetch)
            if len(hits) >= k or dry:
                return hits
            fetch *= 2
        return self._exact(vector, scope, k)

    def _scope_size(self, scope: Scope) -> tuple[int, int]:
        cached = self._sizes.get(scope.key)
        if cached is None or time.monotonic() - cached[2] > SIZE_TTL:
            row = self.conn.read("index/scope_size", scope=scope.key)[0]
            cached = (row["in_scope"], row["total"], time.monotonic())
            self._sizes[scope.key] = cached
        return cached[0], cached[1]

    def _overfetch(self, vector: Sequence[float], scope: Scope, k: int, fetch: int) -> tuple[list[Hit], bool]:
        row = self.conn.read("index/semantic_overfetch", vector=list(vector), fetch=fetch, scope=scope.key, k=k)[0]
        return [Hit(**h) for h in row["hits"]], row["fetched"] < fetch

    def _exact(self, vector: Sequence[float], scope: Scope, k: int) -> list[Hit]:
        rows = self.conn.read("index/semantic_exact", vector=list(vector), scope=scope.key, k=k)
        return [Hit(**r) for r in rows]

    def search_lexical(self, query: str, scope: Scope, k: int) -> list[Hit]:
        lucene = lucene_query(search_terms(query), scope, ("content", "summary"))
        if lucene is None or k <= 0:
            return []
        return [Hit(**r) for r in self.conn.read("index/lexical", lucene=lucene, k=k)]

    def search_entities(self, query: str, scope: Scope, k: int) -> list[Hit]:
        """Entities the query names (see the port), ranked by BM25 over entity names."""
        lucene = lucene_query(words(query), scope, ("name",))
        if lucene is None or k <= 0:
            return []
        rows = self.conn.read("index/entity_lexical", lucene=lucene, k=max(10 * k, 50))
        asked = set(words(query))
        named = [r for r in rows if set(words(r["name"])) <= asked]
        return [Hit(id=r["id"], score=r["score"]) for r in (named or rows)[:k]]

    # -- rebuild and status ---------------------------------------------------------------
    def rebuild(self, scope: Scope | None = None, progress: Progress | None = None) -> int:
        """Recompute every vector and searchable label from the store. A dimension change
        drops and recreates the vector indexes. Returns how many units were indexed."""
        stored = self.stored_model()
        mine = (self.embedder.name, self.embedder.dimension)
        if scope is not None and stored is not None and tuple(stored) != mine:
            raise IndexMismatch("the embedding model changed: rebuild the whole index, not one scope")
        existing = self.vector_dimension()
        if existing is not None and existing != mine[1]:
            for name in ("index/drop_unit_vector_index", "index/drop_entity_vector_index"):
                self.conn.schema(load(name).text, what=name)
            existing = None
        if existing is None:
            self._create_vector_indexes()
        self._sizes.clear()
        scope_key = scope.key if scope else None
        done = self._page_through("index/units_page", "content", scope_key, self._embed_units, progress)
        self._page_through("index/entities_page", "name", scope_key, self._embed_entities, None)
        if scope is None or stored is None:
            self.conn.write("index/set_model", model=mine[0], dimension=mine[1], at=utcnow())
        return done

    def _page_through(self, query: str, text: str, scope_key, apply, progress: Progress | None) -> int:
        after, done = "", 0
        while True:
            rows = self.conn.read(query, scope=scope_key, after=after, limit=self.batch_size)
            if not rows:
                return done
            apply([(r["id"], r[text]) for r in rows])
            after = rows[-1]["id"]
            done += len(rows)
            if progress:
                progress(len(rows))

    def status(self) -> dict:
        stored = self.stored_model()
        counts = self.conn.read("index/status")[0]
        return {
            "model": stored[0] if stored else None,
            "dimension": stored[1] if stored else None,
            "embedder": {"model": self.embedder.name, "dimension": self.embedder.dimension},
            **counts,
            "indexes": self.conn.read("index/index_states"),
        }
