"""``ExchangeStore`` on Neo4j: the stored subjects, and a subject's records read out page by
page (export) and written back (import)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import Neo4jConnection, run
from graphmem.adapters.neo4j.episodes import store_episodes
from graphmem.adapters.neo4j.names import texts_changed
from graphmem.adapters.neo4j.queries import load
from graphmem.adapters.neo4j.rows import (
    Row,
    block_params,
    decision_from_props,
    decision_row,
    deletion_props,
    entity_props,
    episode_from_props,
    model_from_props,
    native,
    review_from_props,
    review_props,
    scope_of,
    scope_props,
    stored_unit,
    trace_params,
)
from graphmem.adapters.neo4j.timelines import apply_batch, fresh_entries, live_vector_property, respan, stored_targets
from graphmem.domain.models import (
    RECORD_KINDS,
    Decision,
    Deletion,
    Entity,
    Episode,
    Invalidation,
    MemoryBlock,
    MemoryUnit,
    RecordKind,
    ReviewItem,
    Scope,
    StoredTrace,
    SubjectCounts,
    Usage,
    WriteBatch,
)
from graphmem.ports import Record, each

#: Record kinds whose keys belong to their subject: another subject may hold the same one.
_OWN_KEYS = frozenset({"episode"})
#: The node each record kind is read from (``exchange/records``), and its key property.
_NODES: dict[str, tuple[str, str]] = {
    "episode": ("Episode", "id"),
    "entity": ("Entity", "id"),
    "unit": ("Unit", "id"),
    "deletion": ("Deletion", "id"),
    "decision": ("Decision", "id"),
    "invalidation": ("Decision", "id"),
    "usage": ("Usage", "unit_id"),
    "block": ("Block", "id"),
    "review": ("Review", "id"),
    "trace": ("Trace", "id"),
}


class Neo4jExchange:
    """``graphmem.ports.ExchangeStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    def subjects(self) -> list[SubjectCounts]:
        rows = self.conn.read("store/subjects")
        return [
            SubjectCounts(scope=scope_of(r), episodes=r["episodes"], units=r["units"], decisions=r["decisions"])
            for r in rows
        ]

    def _records(self, scope: Scope, kind: RecordKind, ids: Sequence[str] | None, after: str, limit: int) -> list[Row]:
        label, key = _NODES[kind]
        query = load("exchange/records").rendered(label=label, key=key)
        return self.conn.read(
            query,
            scope=scope.key,
            subject_type=scope.subject_type.value,
            subject_id=scope.subject_id,
            ids=ids,
            own=kind in _OWN_KEYS,
            after=after,
            limit=limit,
        )

    def dump(
        self, scope: Scope, kind: RecordKind, after: str = "", limit: int = 1000
    ) -> tuple[list[Record], str | None]:
        rows = self._records(scope, kind, None, after, limit)
        page = [record for row in rows for record in _record(kind, row, scope)]
        return page, rows[-1]["key"] if len(rows) == limit else None

    def lookup(self, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
        if not keys:
            return [], set()
        rows = self._records(scope, kind, list(keys), "", len(keys))
        return (
            [record for row in rows if row["mine"] for record in _record(kind, row, scope)],
            {row["key"] for row in rows if not row["mine"]},
        )

    def load(
        self, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch | None = None
    ) -> int:
        derived = derived or WriteBatch()

        def work(tx: ManagedTransaction) -> None:
            if records.keys() & {"episode", "unit", "usage"}:  # new texts, archived ones
                texts_changed(tx, [scope])
            for kind in RECORD_KINDS:
                if records.get(kind):
                    _load(tx, scope, kind, records[kind], derived, "unit" in records)
            if records.get("unit") or records.get("invalidation"):
                _entries(tx, scope, records, derived)

        self.conn.write_tx(work, what=f"import {' and '.join(k for k in RECORD_KINDS if records.get(k))} records")
        return sum(map(len, records.values()))


def _load(
    tx: ManagedTransaction,
    scope: Scope,
    kind: RecordKind,
    records: Sequence[Record],
    derived: WriteBatch,
    with_units: bool,
) -> None:
    """One kind of ``load``; ``derived`` is written with the units, else with the episodes."""
    if kind == "episode":
        store_episodes(tx, each(Episode, records), undecided=False)  # they come with their decisions
        if not with_units:
            apply_batch(tx, scope, derived)  # the entities they name
    elif kind == "unit":  # search entries after the part's edges (``_entries``)
        apply_batch(tx, scope, derived.model_copy(update={"units": tuple(each(MemoryUnit, records))}), entries=False)
    elif kind == "invalidation":
        apply_batch(tx, scope, WriteBatch(invalidations=tuple(each(Invalidation, records))), entries=False)
    elif kind == "decision":
        # A decision may name a unit that is gone (deleted with its episode): its link
        # is left out here as it was where the decision comes from.
        run(tx, "store/create_decisions", rows=[decision_row(d) for d in each(Decision, records)], scope=scope.key)
    elif kind == "entity":
        run(tx, "exchange/put_entities", rows=[{"id": e.id, "props": entity_props(e)} for e in each(Entity, records)])
    elif kind == "usage":
        usage = each(Usage, records)
        rows = [u.model_dump(exclude={"scope"}) for u in usage]
        run(tx, "exchange/put_usage", rows=rows, scope_props=scope_props(scope))
        archived = [u.unit_id for u in usage if u.archived_at is not None]
        run(tx, "entries/set_searchable", ids=archived, scope=scope.key, searchable=False)
    elif kind == "trace":
        rows = [trace_params(t, t.scores) for t in each(StoredTrace, records)]
        run(tx, "audit/put_traces", rows=rows, scope=scope.key)
    # Deletions, blocks and review items: a subject holds few of them.
    elif kind == "deletion":
        for deletion in each(Deletion, records):
            run(tx, "store/put_deletion", props=deletion_props(deletion))
    elif kind == "block":
        for block in each(MemoryBlock, records):
            run(tx, "blocks/put_block", **block_params(block))
    else:
        for review in each(ReviewItem, records):
            run(tx, "review/put_review", props=review_props(review))


def _entries(
    tx: ManagedTransaction, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch
) -> None:
    """The search entries of what a part of an import changed, drawn once: its new units' from
    the part (an import writes a unit with its edges and archive state, ``import_plan``), and
    those of units stored before that its edges end from what is stored."""
    prop = live_vector_property(tx, derived)
    units = each(MemoryUnit, records.get("unit", ()))
    edges = each(Invalidation, records.get("invalidation", ()))
    archived = {u.unit_id for u in each(Usage, records.get("usage", ())) if u.archived_at is not None}
    rows = fresh_entries(units, edges, derived.vectors, archived)
    if rows:
        run(tx, "entries/create_entries", rows=rows, prop=prop)
    respan(tx, scope, stored_targets(units, edges), derived.vectors, prop)


def _record(kind: RecordKind, row: Row, scope: Scope) -> list[Record]:
    """The records of one ``exchange/records`` row: one, or a decision's edges."""
    props = row["record"]
    if kind == "invalidation":
        edges = [Invalidation(decision_id=row["key"], **native(e)) for e in row["edges"]]
        edges.sort(key=lambda e: (e.unit_id, e.expired_at))
        return [*edges]
    if kind == "unit":
        return [stored_unit(props)]
    if kind == "decision":
        return [decision_from_props(props, scope)]
    if kind == "episode":
        return [episode_from_props(props, scope)]
    if kind == "review":
        return [review_from_props(props)]
    if kind == "trace":
        ranked = dict(row["scores"])
        scores = tuple(ranked.get(rank) for rank in range(len(props["recalled_ids"])))
        return [model_from_props(StoredTrace, props, scope, scores=scores)]
    models: dict[str, type[Entity | Deletion | Usage | MemoryBlock]]
    models = {"entity": Entity, "deletion": Deletion, "usage": Usage, "block": MemoryBlock}
    return [model_from_props(models[kind], props, scope)]
