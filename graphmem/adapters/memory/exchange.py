"""Whole subjects out of and into an in-memory store: listing, export pages and import
(``graphmem.ports.ExchangeStore``). The caller holds ``Tables.lock``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any, NamedTuple

from graphmem.adapters.memory.tables import Recalls, Tables
from graphmem.domain.models import (
    RECORD_KINDS,
    AssembleTrace,
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

__all__ = ["dump", "load", "lookup", "subjects"]


class Keyed(NamedTuple):
    """A stored record with its scope and the key an export pages by (a decision's for an edge)."""

    key: str
    scope: Scope
    record: Record


def subjects(tables: Tables) -> list[SubjectCounts]:
    """Each scope holding episodes, units or decisions, with their counts, in Neo4j's order."""
    counts: dict[Scope, dict[str, int]] = {}
    for name, table in (("episodes", tables.episodes), ("units", tables.units), ("decisions", tables.decisions)):
        for record in table.values():
            mine = counts.setdefault(record.scope, {"episodes": 0, "units": 0, "decisions": 0})
            mine[name] += 1
    # By type, id, then project with no project last.
    order = sorted(counts, key=lambda s: (s.subject_type.value, s.subject_id, s.project_id is None, s.project_id or ""))
    return [SubjectCounts(scope=scope, **counts[scope]) for scope in order]


def dump(tables: Tables, scope: Scope, kind: RecordKind, after: str, limit: int) -> tuple[list[Record], str | None]:
    """``ExchangeStore.dump``: a page of the scope's records of ``kind``, by key."""
    mine = sorted((r for r in _records(tables, kind) if r.scope == scope and r.key > after), key=lambda r: r.key)
    keys = [(k, [r.record for r in group]) for k, group in groupby(mine, key=lambda r: r.key)][:limit]
    page = [r for _, group in keys for r in _order(kind, group)]
    return page, keys[-1][0] if len(keys) == limit else None


def lookup(tables: Tables, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
    """``ExchangeStore.lookup``: the scope's records of ``kind`` under ``keys``, and the keys
    another scope holds (none for episodes, whose ids belong to their scope)."""
    wanted = set(keys)
    found = [r for r in _records(tables, kind) if r.key in wanted]
    return (
        _order(kind, (r.record for r in found if r.scope == scope)),
        set() if kind == "episode" else {r.key for r in found if r.scope != scope},
    )


def load(tables: Tables, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch) -> int:
    """``ExchangeStore.load``: store the records as they are, with what ``derived`` holds."""
    if records.keys() & {"episode", "unit", "usage"}:  # new texts, archived ones
        tables.texts_changed(scope)
    if records.get("episode"):
        tables.append(each(Episode, records["episode"]), undecided=False)
    for kind in RECORD_KINDS:
        rows = records.get(kind, ()) if kind != "episode" else ()
        if kind == "invalidation":
            tables.edges.extend(each(Invalidation, rows))
        elif kind == "usage":
            for usage in each(Usage, rows):
                if usage.last_recalled_at is not None:
                    tables.usage[usage.unit_id] = Recalls(usage.last_recalled_at, usage.recall_count)
                if usage.archived_at:
                    tables.archived[usage.unit_id] = usage.archived_at
        elif kind == "trace":
            for trace in each(StoredTrace, rows):
                tables.traces[trace.id] = AssembleTrace(**{k: v for k, v in trace if k != "scores"})
                tables.trace_scores[trace.id] = trace.scores
        elif kind == "block":
            for block in each(MemoryBlock, rows):
                tables.blocks[(block.scope.key, block.label)] = block
        elif kind == "review":
            tables.reviews.update((r.id, r) for r in each(ReviewItem, rows))
        elif kind == "entity":
            tables.entities.update((e.id, e) for e in each(Entity, rows))
        elif kind == "unit":
            tables.units.update((u.id, u) for u in each(MemoryUnit, rows))
        elif kind == "deletion":
            tables.deletions.update((d.id, d) for d in each(Deletion, rows))
        elif kind == "decision":
            tables.decisions.update((d.id, d) for d in each(Decision, rows))
    units = each(MemoryUnit, records.get("unit", ()))
    tables.name_entities(units)
    tables.vectors.update({u.id: derived.vectors[u.id] for u in units if u.id in derived.vectors})
    tables.mention(scope, derived)
    return sum(map(len, records.values()))


def _records(tables: Tables, kind: RecordKind) -> list[Keyed]:
    """Every stored record of one kind, as ``dump`` gives them."""
    if kind == "invalidation":
        return [Keyed(e.decision_id, tables.decisions[e.decision_id].scope, e) for e in tables.edges]
    if kind == "usage":
        return [
            Keyed(uid, tables.units[uid].scope, _usage(tables, uid))
            for uid in set(tables.usage) | set(tables.archived)
            if uid in tables.units
        ]
    if kind == "trace":
        return [
            Keyed(t.id, t.scope, StoredTrace(**dict(t), scores=tables.trace_scores.get(t.id, ())))
            for t in tables.traces.values()
        ]
    by_kind: dict[str, Mapping[Any, Episode | Entity | MemoryUnit | Deletion | Decision | MemoryBlock | ReviewItem]]
    by_kind = {
        "episode": tables.episodes,
        "entity": tables.entities,
        "unit": tables.units,
        "deletion": tables.deletions,
        "decision": tables.decisions,
        "block": tables.blocks,
        "review": tables.reviews,
    }
    return [Keyed(r.id, r.scope, r) for r in by_kind[kind].values()]


def _usage(tables: Tables, unit_id: str) -> Usage:
    last, count = tables.recalls(unit_id)
    return Usage(
        unit_id=unit_id,
        scope=tables.units[unit_id].scope,
        recall_count=count,
        last_recalled_at=last,
        archived_at=tables.archived.get(unit_id),
    )


def _order(kind: RecordKind, records: Iterable[Record]) -> list[Record]:
    """Edges by unit and time, as Neo4j gives a decision's; other records as they come."""
    records = list(records)
    if kind == "invalidation":
        return [*sorted(each(Invalidation, records), key=lambda e: (e.unit_id, e.expired_at))]
    return records
