"""MemoryIndex on Neo4j's own indexes: HNSW vector indexes and Lucene fulltext.

Scope guarantee. Neo4j 5.26 cannot filter inside a vector query, so a scoped search
1. over-fetches from the HNSW index and keeps the caller's scope; if that yields k hits, or the
   index ran dry, it is done (the common case: a scope that is a large share of the data);
2. otherwise counts the scope: at or below ``exact_threshold`` searchable units it computes
   exact cosine over the scope alone (a 5-unit scope among 100k others gets its 5 best hits);
3. above it, over-fetches in proportion to the scope's share of the index, doubling until k
   hits or the whole index is read, and falls back to the exact scan if the cap is reached.
Fulltext needs none of this: each unit's scope token is indexed beside its text and the Lucene
query requires it, so Lucene itself returns only the scope's best matches.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ..cypher import load
from ..errors import IndexMismatch
from ..models import Hit, MemoryUnit, Scope, utcnow
from ..ports import Embedder
from .neo4j_driver import Neo4jConnection

_WORD = re.compile(r"\w+", re.UNICODE)
#: Lucene refuses queries with more than 1024 clauses; a query never needs this many words.
MAX_QUERY_WORDS = 64

Progress = Callable[[int], None]


def lucene_query(text: str, scope: Scope, fields: Sequence[str]) -> str | None:
    """Plain words of ``text`` as a Lucene query restricted to ``scope``; None when no words.

    Only ``\\w+`` runs survive, lower-cased, so no user character can reach Lucene syntax
    (quotes, colons, parentheses, backslashes, AND/OR/NOT operators) and nothing can raise.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))[:MAX_QUERY_WORDS]
    if not words:
        return None
    terms = " ".join(words)
    clauses = " ".join(f"{field}:({terms})" for field in fields)
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
            self._create_vector_indexes()
            self.conn.write("index/set_model", model=mine[0], dimension=mine[1], at=utcnow())
        elif tuple(stored) != mine:
            raise IndexMismatch(
                f"the index was built with {stored[0]} ({stored[1]} dims) but the embedder is "
                f"{mine[0]} ({mine[1]} dims): run `graphmem index rebuild`"
            )

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
        return self.search_vector(self.embedder.embed([query])[0], scope, k)

    def search_vector(self, vector: Sequence[float], scope: Scope, k: int) -> list[Hit]:
        """Scoped semantic search for an already embedded query (see the module docstring)."""
        if k <= 0:
            return []
        fetch = max(4 * k, 40)
        hits, dry = self._overfetch(vector, scope, k, fetch)
        if len(hits) >= k or dry:
            return hits
        size = self.conn.read("index/scope_size", scope=scope.key)[0]
        in_scope, total = size["in_scope"], size["total"]
        if in_scope <= self.exact_threshold:
            return self._exact(vector, scope, k)
        # Expected hits = fetch * share; aim for twice k, then double while short.
        fetch = max(fetch * 2, int(2 * k * total / in_scope))
        while fetch < total:
            hits, dry = self._overfetch(vector, scope, k, fetch)
            if len(hits) >= k or dry:
                return hits
            fetch *= 2
        return self._exact(vector, scope, k)

    def _overfetch(self, vector: Sequence[float], scope: Scope, k: int, fetch: int) -> tuple[list[Hit], bool]:
        row = self.conn.read("index/semantic_overfetch", vector=list(vector), fetch=fetch, scope=scope.key, k=k)[0]
        return [Hit(**h) for h in row["hits"]], row["fetched"] < fetch

    def _exact(self, vector: Sequence[float], scope: Scope, k: int) -> list[Hit]:
        rows = self.conn.read("index/semantic_exact", vector=list(vector), scope=scope.key, k=k)
        return [Hit(**r) for r in rows]

    def search_lexical(self, query: str, scope: Scope, k: int) -> list[Hit]:
        lucene = lucene_query(query, scope, ("content", "summary"))
        if lucene is None or k <= 0:
            return []
        return [Hit(**r) for r in self.conn.read("index/lexical", lucene=lucene, k=k)]

    def search_entities(self, query: str, scope: Scope, k: int) -> list[Hit]:
        """Entities whose names the query mentions (BM25 over entity names, scoped)."""
        lucene = lucene_query(query, scope, ("name",))
        if lucene is None or k <= 0:
            return []
        return [Hit(**r) for r in self.conn.read("index/entity_lexical", lucene=lucene, k=k)]

    # -- rebuild and status ---------------------------------------------------------------
    def rebuild(self, scope: Scope | None = None, progress: Progress | None = None) -> int:
        """Recompute every vector and searchable label from the store. A dimension change
        drops and recreates the vector indexes. Returns how many units were indexed."""
        stored = self.stored_model()
        if stored is not None and stored[1] != self.embedder.dimension:
            if scope is not None:
                raise IndexMismatch("the embedding dimension changed: rebuild the whole index, not one scope")
            for name in ("index/drop_unit_vector_index", "index/drop_entity_vector_index"):
                self.conn.schema(load(name).text, what=name)
        if stored is None or stored[1] != self.embedder.dimension:
            self._create_vector_indexes()
        scope_key = scope.key if scope else None
        done = self._page_through("index/units_page", "content", scope_key, self._embed_units, progress)
        self._page_through("index/entities_page", "name", scope_key, self._embed_entities, None)
        if scope is None or stored is None:
            self.conn.write(
                "index/set_model", model=self.embedder.name, dimension=self.embedder.dimension, at=utcnow()
            )
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
