"""MemoryIndex on Neo4j: search entries (``graphmem.domain.entries``) in an HNSW vector index
and a Lucene fulltext index, plus the entity names a question can mention.

- ``Neo4jStore`` writes entries in the transaction of the units and edges they derive from;
  this side searches them and rebuilds them.
- One recall is one statement: ``recall/hybrid`` on Neo4j 2026.01+ (filtered inside the vector
  index), ``recall/hybrid_v5`` on 5.26 (over-fetched, or an exact scan of a small scope).
- Vectors of one embedding model live in one entry property (a *generation*); a rebuild with
  another model builds the next aside and switches in one write.

docs/recall.md and docs/models.md describe both.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta
from typing import Any, NamedTuple

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import Embedding, Neo4jConnection, run
from graphmem.adapters.neo4j.lucene import lucene_query
from graphmem.adapters.neo4j.names import texts_changed
from graphmem.adapters.neo4j.queries import Query, load
from graphmem.adapters.neo4j.rows import (
    entry_row,
    name_props,
    scope_of,
    stored_datetime,
    to_datetime,
    unit_from_props,
    unit_from_row,
    vector_property,
)
from graphmem.domain.entries import MAX, MIN, from_micros, micros, near, spans, unit_text, vector_calls, world_range
from graphmem.domain.fusion import CONVERSATION_GAP, TIE
from graphmem.domain.mentions.first_person import as_named
from graphmem.domain.models import (
    AsOf,
    MemoryUnit,
    Reached,
    Scope,
    Scored,
    SearchRequest,
    Step,
    entity_ids,
    normalise,
    utcnow,
)
from graphmem.errors import ConfigurationError, IndexMismatch
from graphmem.ports import Embedder

#: Seconds a scope's entry count is trusted for choosing the 5.26 strategy.
SIZE_TTL = 30.0
#: Entries read from fulltext per hit kept: closed and other-time entries of a unit share its
#: words, and are filtered out after the index.
LEXICAL_OVERFETCH = 3

Progress = Callable[[int], None]


class ScopeSize(NamedTuple):
    """How many entries some scopes hold, of how many in the database, read when."""

    in_scopes: int
    total: int
    read_at: float


def index_name(generation: int) -> str:
    return f"entry_embedding_{generation}"


class Neo4jIndex:
    """MemoryIndex on Neo4j (see ``graphmem.ports.MemoryIndex``)."""

    def __init__(
        self,
        conn: Neo4jConnection,
        embedder: Embedder,
        exact_threshold: int = 2_000,
        batch_size: int = 1_000,
        cache_size: int = 4_096,
    ) -> None:
        self.conn = conn
        self.embedder = embedder
        self.exact_threshold = exact_threshold
        self.batch_size = batch_size
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache_size
        self._generation: int | None = None
        self._filtered: bool | None = None
        # Picks the 5.26 strategy only, so a stale count costs speed, never correctness.
        self._sizes: dict[tuple[str, ...], ScopeSize] = {}

    # -- vectors --------------------------------------------------------------------------
    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """Embeddings of ``texts``; recent ones come from a cache (a write embeds its units'
        contents for its neighbour search and again for its entries, a retried write again)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for text, vector in zip(missing, self.embedder.embed(missing) if missing else []):
            self._cache[text] = vector
        out = []
        for text in texts:
            self._cache.move_to_end(text)
            out.append(self._cache[text])
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return out

    def clear_cache(self) -> None:
        """Forget every cached text and vector, the embedder's too. All of them, not the erased
        subject's: the cache also holds questions, which belong to no unit, and refilling it
        costs one embedding per text."""
        self._cache.clear()
        clear = getattr(self.embedder, "clear_cache", None)
        if clear is not None:
            clear()

    # -- layout ---------------------------------------------------------------------------
    def _model(self) -> dict[str, Any] | None:
        rows = self.conn.read("index/get_model")
        return rows[0] if rows else None

    def stored_model(self) -> tuple[str, int] | None:
        model = self._model()
        return (model["model"], model["dimension"]) if model else None

    @property
    def filtered(self) -> bool:
        """Whether the server filters inside its vector index (Neo4j 2026.01+)."""
        if self._filtered is None:
            version, _ = self.conn.server_version()
            self._filtered = int(version.split(".")[0]) >= 2026
        return self._filtered

    @property
    def generation(self) -> int:
        if self._generation is None:
            model = self._model()
            if model is None or model["generation"] == 0:
                raise ConfigurationError("the search index is not built yet: run `graphmem init`")
            self._generation = model["generation"]
        return self._generation

    def _create_vector_index(self, generation: int, dimension: int, seconds: int = 300) -> None:
        existing = self.conn.read("index/vector_dimension", name=index_name(generation))
        if existing and existing[0]["dimension"] != dimension:
            if self._model() is not None:
                raise IndexMismatch(
                    f"vector index {index_name(generation)} has {existing[0]['dimension']} dims, "
                    f"the embedder {dimension}: run `graphmem index rebuild`"
                )
            # Left by a database emptied by hand (no recorded model): nothing depends on it.
            self.conn.schema(load("index/drop_vector_index").render(index=index_name(generation)), what="drop index")
        elif existing and self.filtered and not existing[0]["filters"]:
            # Made on Neo4j 5.26, whose store moved to 2026.x: search filters inside the index
            # now, on properties it must declare; made again over the same entries and vectors.
            self.conn.schema(load("index/drop_vector_index").render(index=index_name(generation)), what="drop index")
        name = "index/create_entry_vector_index" if self.filtered else "index/create_entry_vector_index_v5"
        text = load(name).render(index=index_name(generation), prop=vector_property(generation), dimensions=dimension)
        self.conn.schema(text, what=name)
        self.conn.schema(load("admin/await_indexes").render(seconds=seconds), what="awaiting indexes")

    def loading(self) -> AbstractContextManager[None]:
        # Measured (docs/benchmarks.md, "Bulk loads"): an HNSW index filled entry by entry
        # costs more than one built over the loaded entries.
        if self.conn.read("entries/any_entry")[0]["any"]:
            return nullcontext()
        return self._built_after(self.generation)

    @contextmanager
    def _built_after(self, generation: int) -> Iterator[None]:
        self.conn.schema(load("index/drop_vector_index").render(index=index_name(generation)), what="drop index")
        try:
            yield
        finally:
            # Populated over all that was loaded: it may take longer than a new index.
            self._create_vector_index(generation, self.embedder.dimension, seconds=3600)

    def ensure(self) -> None:
        """Create the search layout for this embedder on a fresh database, upgrade a database
        written before search entries (entries built from its units, keeping their vectors),
        or check that the live model is this embedder's. Raises ``IndexMismatch`` telling the
        operator to rebuild."""
        model = self._model()
        mine = (self.embedder.name, self.embedder.dimension)
        if model is not None and model["next_model"] is not None:
            raise IndexMismatch(
                f"an index rebuild to {model['next_model']} did not finish: run `graphmem index rebuild` to complete it"
            )
        if model is not None and (model["model"], model["dimension"]) != mine:
            raise IndexMismatch(
                f"the index was built with {model['model']} ({model['dimension']} dims) but the "
                f"embedder is {mine[0]} ({mine[1]} dims): run `graphmem index rebuild`"
            )
        generation = model["generation"] if model and model["generation"] else 1
        self._create_vector_index(generation, mine[1])
        if model is None or model["generation"] == 0:
            self._derive(None, reuse=True)
            self.conn.write("index/set_model", model=mine[0], dimension=mine[1], generation=generation, at=utcnow())
        self._generation = generation

    # -- search ---------------------------------------------------------------------------
    def _search_params(self, request: SearchRequest) -> dict[str, Any]:
        at = request.at
        lo, hi = world_range(request.at, request.during)
        return {
            "scopes": [s.key for s in request.scopes],
            "kinds": [k.value for k in request.kinds],
            "vector": request.vector,
            "s": micros(at.known, MIN),
            "t_lo": lo,
            "t_hi": hi,
            "fetch": request.fetch,
        }

    def recall(self, request: SearchRequest) -> list[Scored]:
        params = self._search_params(request)

        def text_query(terms: tuple[str, ...] | None) -> str | None:
            return lucene_query(terms, request.scopes, "text") if terms else None

        params.update(
            names=[{"norm": n, "ids": [entity_ids(s, [n])[0] for s in request.scopes]} for n in request.names],
            variants={
                "": {"vector": request.vector, "lucene": text_query(request.terms)},
                **{"\n".join(u.names): {"vector": u.vector, "lucene": text_query(u.terms)} for u in request.unnamed},
            },
            entity_lucene=lucene_query(request.words or (), request.scopes, "name") if request.words else None,
            words=list(request.words or ()),
            lexical_fetch=LEXICAL_OVERFETCH * request.fetch,
            k=request.k,
            keep=request.kept,
            gap=CONVERSATION_GAP // timedelta(microseconds=1),
            depth=request.depth,
            pool=request.pool,
            rrf_k=request.rrf_k,
            tie=TIE,
            weights=request.weights,
            seeds=request.seeds,
            fanout=request.fanout,
            hops=request.hops,
            limit=request.frontier,
            hop_decay=request.hop_decay,
            prop=vector_property(self.generation),
            window=[micros(request.window[0], MIN), micros(request.window[1], MAX)] if request.window else None,
            began_first=request.began_first,
        )
        world = (params["t_lo"], params["t_hi"])
        rules = near(request.window, world, params["kinds"]) if request.window else []
        if self.filtered:
            query = self._rendered("recall/hybrid")
            params["calls"], rules = vector_calls(params["kinds"], world, rules)
        else:
            query = load("recall/hybrid_v5")
            params.update(self._v5_vector(request))
        params["near"] = [n.props() for n in rules]
        rows = self.conn.read(query, **params)
        return [
            Scored(unit=_seen(r), score=r["score"], hop=r["hop"], path=tuple(r["path"]), similarity=r["similarity"])
            for r in rows
        ]

    def _rendered(self, name: str) -> Query:
        return load(name).rendered(index=index_name(self.generation))

    def _v5_vector(self, request: SearchRequest) -> dict[str, Any]:
        """How 5.26 reads the vector list: an exact scan of small scopes, else an over-fetch
        sized by the scopes' share of all entries."""
        key = tuple(s.key for s in request.scopes)
        size = self._sizes.get(key)
        if size is None or time.monotonic() - size.read_at > SIZE_TTL:
            row = self.conn.read("index/scope_entries", scopes=list(key))[0]
            size = self._sizes[key] = ScopeSize(row["in_scopes"], row["total"], time.monotonic())
        in_scopes, total = size.in_scopes, size.total
        fetch = max(4 * request.fetch, math.ceil(2 * request.fetch * total / max(in_scopes, 1)))
        return {
            "index_name": index_name(self.generation),
            "exact": in_scopes <= self.exact_threshold,
            "vector_fetch": min(max(total, 1), fetch),
        }

    def hop(self, request: SearchRequest, step: Step) -> list[Reached]:
        params = self._search_params(request)
        del params["fetch"]
        through = list(step.through) + [None] * (len(step.frontier) - len(step.through))
        rows = self.conn.read(
            "recall/hop",
            **params,
            frontier=list(step.frontier),
            through=through,
            prop=vector_property(self.generation),
            fanout=request.fanout,
            seen=sorted(step.seen),
            limit=step.limit,
            words=list(request.words or ()),
        )
        return [
            Reached(source=r["source"], via=r["via"], unit=_seen(r), score=r["score"], similarity=r["similarity"])
            for r in rows
        ]

    def search_semantic_many(self, queries: Sequence[str], scope: Scope, k: int, at: AsOf) -> list[list[Scored]]:
        if not queries:
            return []
        t_lo, t_hi = world_range(at, None)
        params = {
            "vectors": self.vectors(queries),
            "scope": scope.key,
            "s": micros(at.known, MIN),
            "t_lo": t_lo,
            "t_hi": t_hi,
            "k": k,
        }
        if self.filtered:
            rows = self.conn.read(self._rendered("recall/neighbours"), **params)
        else:
            rows = self.conn.read(
                "recall/neighbours_v5", **params, index_name=index_name(self.generation), fetch=max(20 * k, 100)
            )
        ids = tuple({r["id"] for r in rows})
        units = {}
        if ids:
            found = self.conn.read(
                "store/list_units",
                scope=scope.key,
                ids=list(ids),
                hashes=None,
                slots=None,
                kind=None,
                labels=[],
                include_expired=False,
                valid=at.valid,
                known=at.known,
                offset=0,
                limit=len(ids),
            )
            units = {u.id: u for u in map(unit_from_row, found)}
        out: list[list[Scored]] = [[] for _ in queries]
        for r in rows:
            if r["id"] in units:
                out[r["i"]].append(Scored(unit=units[r["id"]], score=r["score"]))
        return out

    # -- rebuild and status ---------------------------------------------------------------
    def rebuild(self, scope: Scope | None = None, progress: Progress | None = None) -> int:
        """Recompute search entries from the store: every unit's entries from its edges and
        archive state, with vectors from the current embedder (one scope, or all). A new model
        is built aside in the next generation and switched to in one write (all scopes only).
        Returns how many units were indexed."""
        model = self._model()
        mine = (self.embedder.name, self.embedder.dimension)
        if model is None or model["generation"] == 0:
            self.ensure()
            model = self._model()
            assert model is not None  # ensure() writes it
        if (model["model"], model["dimension"]) == mine and model["next_model"] is None:
            self._generation = model["generation"]
            self._create_vector_index(model["generation"], mine[1])
            return self._derive(scope, reuse=False, progress=progress)
        if scope is not None:
            raise IndexMismatch("the embedding model changed: rebuild the whole index, not one scope")
        return self._switch(model, progress)

    def _derive(self, scope: Scope | None, reuse: bool, progress: Progress | None = None) -> int:
        """Write every unit's entries again, from its edges and archive state, page by page;
        ``reuse`` keeps the vector a unit carried before search entries existed."""
        prop = vector_property(self._generation or 1)
        after, done = "", 0
        scope_key = scope.key if scope else None
        while rows := self.conn.read("index/units_page", scope=scope_key, after=after, limit=self.batch_size):
            scopes = [scope_of(r) for r in rows]
            searched = [
                as_named(r["content"], s.subject_type.value, s.subject_id, r["channel"]) for r, s in zip(rows, scopes)
            ]
            fresh = iter(self.vectors([t for r, t in zip(rows, searched) if not (reuse and r["legacy_vector"])]))
            entries = []
            for r, unit_scope, text in zip(rows, scopes, searched):
                vector = r["legacy_vector"] if reuse and r["legacy_vector"] else next(fresh)
                edges = [(stored_datetime(a), to_datetime(b)) for a, b in r["edges"]]
                entries += [
                    entry_row(
                        r["id"],
                        unit_scope,
                        r["kind"],
                        unit_text(text, r["summary"]),
                        span,
                        vector,
                        r["archived"],
                    )
                    for span in spans(
                        stored_datetime(r["created_at"]),
                        to_datetime(r["valid_at"]),
                        to_datetime(r["invalid_at"]),
                        edges,
                    )
                ]
            ids = [r["id"] for r in rows]

            def work(
                tx: ManagedTransaction,
                ids: list[str] = ids,
                entries: list[dict[str, Any]] = entries,
                scopes: list[Scope] = scopes,
            ) -> None:
                texts_changed(tx, scopes)  # a write's plan searched the texts that go and come back here
                run(tx, "entries/delete_entries", ids=ids)
                if entries:
                    run(tx, "entries/create_entries", rows=entries, prop=prop)
                run(tx, "index/forget_legacy", ids=ids)

            self.conn.write_tx(work, what="rebuild entries")
            after = rows[-1]["id"]
            done += len(rows)
            if progress:
                progress(len(rows))
        self._entity_words(scope_key)
        return done

    def _entity_words(self, scope_key: str | None) -> None:
        after = ""
        while rows := self.conn.read("index/entities_page", scope=scope_key, after=after, limit=self.batch_size):
            self.conn.write(
                "index/entity_words",
                rows=[{"id": r["id"], "props": name_props(r["name"], r["norm"] or normalise(r["name"]))} for r in rows],
            )
            after = rows[-1]["id"]

    def _switch(self, model: dict[str, Any], progress: Progress | None) -> int:
        """Build the new model's vectors aside (resumable), then make them live in one write."""
        mine = (self.embedder.name, self.embedder.dimension)
        old, new = model["generation"], model["generation"] + 1
        self.conn.write("index/set_next_model", model=mine[0], dimension=mine[1], at=utcnow())
        self._create_vector_index(new, mine[1])
        prop, after, done = vector_property(new), "", 0
        while rows := self.conn.read("index/units_to_vector", prop=prop, after=after, limit=self.batch_size):
            texts = [as_named(r["content"], r["subject_type"], r["subject_id"], r["channel"]) for r in rows]
            vectors = self.vectors(texts)
            self.conn.write(
                "index/set_entry_vectors",
                prop=prop,
                rows=[{"id": r["id"], "vector": Embedding(v)} for r, v in zip(rows, vectors)],
            )
            after = rows[-1]["id"]
            done += len(rows)
            if progress:
                progress(len(rows))
        self.conn.write("index/set_model", model=mine[0], dimension=mine[1], generation=new, at=utcnow())
        self._generation = new
        self.conn.schema(load("index/drop_vector_index").render(index=index_name(old)), what="drop old index")
        while self.conn.write("index/drop_vectors", prop=vector_property(old), limit=10_000)[0]["removed"]:
            pass
        return done

    def status(self) -> dict[str, Any]:
        model = self._model()
        counts = self.conn.read("index/status", open=MAX)[0]
        return {
            "model": model["model"] if model else None,
            "dimension": model["dimension"] if model else None,
            "generation": model["generation"] if model else None,
            "building": model["next_model"] if model else None,
            "embedder": {"model": self.embedder.name, "dimension": self.embedder.dimension},
            **counts,
            "indexes": self.conn.read("index/index_states"),
        }


def _seen(row: dict[str, Any]) -> MemoryUnit:
    """A unit from a search row: its end and first invalidation as seen at the search's system
    time come from the entry that was live then."""
    return unit_from_props(row["unit"], row["expired_at"], from_micros(row["t_to"]))
