"""``TimelineStore`` on Neo4j: a timeline's state, the commit of a write batch, and the deletion
of an episode, which redraws the timelines it touched.

A commit writes units, decisions, invalidation edges and the search entries they change in one
transaction, guarded by the scope's names lock (``graphmem.ports.TimelineStore.commit``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import Neo4jConnection, run
from graphmem.adapters.neo4j.names import known_names_in, link_mentions, names_key, texts_changed, texts_naming
from graphmem.adapters.neo4j.rows import (
    Row,
    decision_from_props,
    decision_row,
    deletion_props,
    group_unit,
    invalidation_row,
    review_props,
    scope_props,
    unit_entries,
    unit_rows,
    vector_property,
)
from graphmem.domain.mentions import Named, digest, named_in
from graphmem.domain.models import (
    Decision,
    Deletion,
    GroupUnit,
    Invalidation,
    MemoryUnit,
    Relink,
    ReviewItem,
    Rewrite,
    Scope,
    WriteBatch,
    new_id,
    utcnow,
)
from graphmem.errors import ConfigurationError, Conflict, IndexMismatch, NotFound, episodes_gone


@dataclass(frozen=True)
class StagedBatch:
    """A batch's commit parameters, shaped outside its transaction (``Neo4jStore.stage``), and
    what they were shaped from: a copy of the batch with other records, names or texts
    (compared by identity) is shaped again."""

    source: tuple[Any, ...]
    units: dict[str, list[Row]]
    decisions: list[Row]
    invalidations: list[Row]
    guards: list[Row]
    #: The search entries of the batch's units (``fresh_entries``).
    entries: list[Row]
    #: Among ``texts_read``, the units and episodes naming ``anchors`` (``earlier_named``).
    earlier: tuple[Named, Named] | None

    @staticmethod
    def _source(batch: WriteBatch) -> tuple[Any, ...]:
        return (
            batch.units,
            batch.decisions,
            batch.invalidations,
            batch.vectors,
            batch.guards,
            batch.anchors,
            batch.texts_read,
        )

    @classmethod
    def of(cls, batch: WriteBatch) -> StagedBatch:
        """The batch's parameters: those it was staged with while they fit it, else shaped now."""
        staged, source = batch.staged, cls._source(batch)
        if isinstance(staged, cls) and all(a is b for a, b in zip(staged.source, source)):
            return staged
        read = batch.texts_read
        return cls(
            source=source,
            units=unit_rows(batch.units),
            decisions=[decision_row(d) for d in batch.decisions],
            invalidations=[invalidation_row(i) for i in batch.invalidations],
            guards=[{"group": g, "version": v} for g, v in sorted(batch.guards.items())],
            entries=fresh_entries(batch.units, batch.invalidations, batch.vectors),
            earlier=(named_in(batch.anchors, read.found), named_in(batch.anchors, read.episodes))
            if batch.anchors and read
            else None,
        )


def live_vector_property(tx: ManagedTransaction, batch: WriteBatch) -> str:
    """The property the live entries keep their vectors in, read in the writing transaction
    (generation 1's before any index exists).

    Raises ``IndexMismatch`` for a batch embedded with another model than the live one, and
    ``ConfigurationError`` for any write while a rebuild switches models.
    """
    rows = run(tx, "index/get_model")
    if not rows:
        return vector_property(1)
    model = rows[0]
    if model["next_model"] is not None:
        raise ConfigurationError(
            f"an index rebuild to {model['next_model']} is in progress: "
            "writes wait until `graphmem index rebuild` finishes"
        )
    if batch.vectors and batch.vector_model not in (None, model["model"]):
        raise IndexMismatch(
            f"the index is built with {model['model']} but this write was embedded with "
            f"{batch.vector_model}: run `graphmem index rebuild`"
        )
    return vector_property(model["generation"])


def hold_names(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, relink: Relink | None) -> WriteBatch:
    """The batch as its commit writes it once it holds the scope's names lock
    (``WriteBatch.held``), its names and texts counted.

    - Names: by those it was planned with, which a later writer's plan may have included
      (``NamesRead.ahead``); drawn again, it makes known no more than those.
    - Texts: by its new units' key (``TextsRead.ahead``).
    """
    if batch.names_read is None and not batch.anchors and not batch.guards and not batch.changes_texts:
        return batch
    held = run(
        tx,
        "mentions/hold_names",
        key=names_key(scope),
        scope_props=scope_props(scope),
        made=bool(batch.anchors),
        last=digest(batch.anchors) if batch.anchors else None,
        texts=batch.changes_texts,
        texts_key=batch.texts_key,
    )[0]
    return batch.held(
        (held["version"], held["last"]),
        (held["texts"], held["texts_last"]),
        relink,
        lambda texts: known_names_in(tx, scope, texts),
    )


def apply_batch(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, entries: bool = True) -> None:
    """The creating part of a commit: units, decisions, reviews, edges, unarchived units,
    mention links, and (unless the caller recomputes them) the search entries they change."""
    staged = StagedBatch.of(batch)
    units, decisions, invalidations = staged.units, staged.decisions, staged.invalidations
    prop = live_vector_property(tx, batch) if entries else None
    earlier = earlier_named(tx, scope, batch, staged)  # before this batch's texts are searchable
    if units["rows"]:
        run(tx, "store/create_units", **units)
        if prop is not None and staged.entries:
            run(tx, "entries/create_entries", rows=staged.entries, prop=prop)
    if decisions:
        linked = run(tx, "store/create_decisions", rows=decisions, scope=scope.key)[0]
        if linked["gone"]:
            raise episodes_gone(linked["gone"], scope)
        if linked["missing"]:
            raise NotFound(f"{linked['missing']} decision(s) name a unit that is not in scope {scope}")
    for item in batch.reviews:
        run(tx, "review/put_review", props=review_props(item))
    if invalidations:
        written = run(tx, "store/create_invalidations", rows=invalidations, scope=scope.key)
        if written[0]["written"] != len(invalidations):
            raise NotFound(f"an invalidation names a unit or decision not in scope {scope}")
        if prop is not None:
            respan(tx, scope, stored_targets(batch.units, batch.invalidations), batch.vectors, prop)
    if batch.unarchive:
        run(tx, "store/unarchive", ids=list(batch.unarchive), scope=scope.key)
        run(tx, "entries/set_searchable", ids=list(batch.unarchive), scope=scope.key, searchable=True)
    if batch.decided:
        run(tx, "store/decided_episodes", ids=list(batch.decided), scope=scope.key)
    link_mentions(tx, scope, {**earlier[0], **batch.unit_mentions}, {**earlier[1], **batch.episode_mentions})


def earlier_named(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, staged: StagedBatch) -> tuple[Named, Named]:
    """Stored units and episodes that name what the batch makes known, with those names: among
    the texts its plan found, when they stand (``WriteBatch.held``), else as a search finds
    them now."""
    if not batch.anchors:
        return {}, {}
    if staged.earlier is not None:
        return staged.earlier
    read = texts_naming(tx, scope, batch.anchors)
    return named_in(batch.anchors, read.found), named_in(batch.anchors, read.episodes)


def fresh_entries(
    units: Sequence[MemoryUnit],
    invalidations: Sequence[Invalidation],
    vectors: Mapping[str, list[float]],
    archived: Collection[str] = (),
) -> list[Row]:
    """The search entries of units the transaction creates, from the edges it writes to them:
    a new unit has no other, so they need no reading back (``respan``)."""
    edges: dict[str, list[tuple[datetime, datetime | None]]] = {}
    for i in invalidations:
        edges.setdefault(i.unit_id, []).append((i.expired_at, i.invalid_at))
    return [row for u in units for row in unit_entries(u, edges.get(u.id, ()), vectors.get(u.id), u.id in archived)]


def stored_targets(units: Sequence[MemoryUnit], invalidations: Sequence[Invalidation]) -> list[str]:
    """The units the invalidations end that were stored before (``respan`` them)."""
    return sorted({i.unit_id for i in invalidations} - {u.id for u in units})


def respan(
    tx: ManagedTransaction, scope: Scope, ids: Sequence[str], vectors: dict[str, list[float]], prop: str
) -> None:
    """Recompute the search entries of these units from what is stored now (their edges
    changed), keeping each unit's vector: entries are always
    ``graphmem.domain.entries.spans`` of a unit and its edges."""
    ids = sorted(set(ids))  # a unit named twice (re-derived and re-added) must get its entries once
    if not ids:
        return
    kept = {r["id"]: r["vector"] for r in run(tx, "entries/unit_vectors", ids=ids, prop=prop)}
    records = [group_unit(r) for r in run(tx, "store/unit_records", scope=scope.key, ids=ids)]
    run(tx, "entries/delete_entries", ids=ids)
    entries = [
        row
        for g in records
        for row in unit_entries(
            g.unit,
            [(e.expired_at, e.invalid_at) for e in g.edges],
            vectors.get(g.unit.id) or kept.get(g.unit.id),
            g.archived,
        )
    ]
    if entries:
        run(tx, "entries/create_entries", rows=entries, prop=prop)


class Neo4jTimelines:
    """``graphmem.ports.TimelineStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    def group_state(self, scope: Scope, groups: Sequence[str]) -> tuple[list[Decision], list[GroupUnit]]:
        if not groups:
            return [], []
        row = self.conn.read("store/group_state", scope=scope.key, groups=sorted(set(groups)))[0]
        events = sorted((decision_from_props(d, scope) for d in row["events"]), key=lambda d: (d.decided_at, d.id))
        return events, [group_unit(u) for u in row["units"]]

    def episode_groups(self, scope: Scope, episode_id: str) -> set[str]:
        rows = self.conn.read("store/episode_groups", scope=scope.key, id=episode_id)
        return set(rows[0]["groups"]) if rows else set()

    def episode_events(self, scope: Scope, episode_ids: Sequence[str]) -> list[Decision]:
        rows = self.conn.read("store/episode_events", scope=scope.key, ids=list(episode_ids))
        return [decision_from_props(r["decision"], scope) for r in rows]

    def stage(self, batch: WriteBatch, scope: Scope) -> WriteBatch:
        staged = StagedBatch.of(batch)
        return batch if staged is batch.staged else batch.model_copy(update={"staged": staged})

    def commit(self, batch: WriteBatch, scope: Scope, relink: Relink | None = None) -> None:
        records: tuple[MemoryUnit | Decision | ReviewItem, ...] = (*batch.units, *batch.decisions, *batch.reviews)
        for record in records:
            if record.scope != scope:
                raise Conflict(f"{type(record).__name__} {record.id} is not in scope {scope}")
        batch_id = new_id()
        batch = self.stage(batch, scope)
        guards = batch.staged.guards

        def work(tx: ManagedTransaction) -> None:
            # A retried attempt after a lost acknowledgement finds its own commit key and stops.
            begun = run(tx, "store/begin_commit", id=batch_id, scope_props=scope_props(scope), committed_at=utcnow())
            if not begun[0]["fresh"]:
                return
            held = hold_names(tx, scope, batch, relink)  # first: the guards are read under it
            if guards:
                stale = run(tx, "store/check_guards", scope=scope.key, guards=guards)[0]["stale"]
                if stale:
                    raise Conflict(f"{stale} guarded group(s) changed since read; re-plan the write")
            apply_batch(tx, scope, held)

        self.conn.write_tx(work, what="commit")

    def delete_episode(self, episode_id: str, scope: Scope, rewrite: Rewrite, deletion: Deletion) -> Deletion | None:
        """Delete an episode, its units and decisions, and apply the timeline ``rewrite`` that
        re-derives what they changed, in one transaction; None when not in the scope."""
        add = self.stage(rewrite.add, scope)

        def work(tx: ManagedTransaction) -> Deletion | None:
            texts_changed(tx, [scope])
            rows = run(tx, "store/delete_episode", id=episode_id, scope=scope.key)
            if not rows:
                return None
            if rewrite.drop_edges:
                run(
                    tx,
                    "store/drop_edges",
                    scope=scope.key,
                    edges=[{"unit_id": u, "decision_id": d, "expired_at": at} for u, d, at in rewrite.drop_edges],
                )
            named = set(rows[0]["entities"])
            if rewrite.drop_units:
                named |= set(run(tx, "store/drop_units", scope=scope.key, ids=list(rewrite.drop_units))[0]["entities"])
            record = deletion.model_copy(
                update={"units": rows[0]["units"] + len(rewrite.drop_units), "decisions": rows[0]["decisions"]}
            )
            run(tx, "store/put_deletion", props=deletion_props(record))
            apply_batch(tx, scope, add, entries=False)
            prop = live_vector_property(tx, add)
            respan(tx, scope, [*rewrite.respan, *(u.id for u in add.units)], add.vectors, prop)
            if named:
                run(tx, "mentions/forget_orphans", ids=sorted(named))
            return record

        return self.conn.write_tx(work, what="delete episode")
