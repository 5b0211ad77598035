"""Units as an in-memory store shows them: at (T, S) with their ends, with their edges and
recalls, and the edges of one unit (``graphmem.ports.UnitStore``, ``AuditStore``). The caller
holds ``Tables.lock``."""

from __future__ import annotations

from datetime import datetime

from graphmem.adapters.memory.tables import Tables
from graphmem.domain.models import (
    AsOf,
    Edge,
    GroupUnit,
    InvalidatedBy,
    Invalidation,
    MemoryUnit,
    Scope,
    Superseded,
    TemporalMeta,
    UnitEdges,
    UnitFilter,
)

__all__ = ["edges_of", "units_at", "with_edges"]


def units_at(tables: Tables, scope: Scope, flt: UnitFilter, at: AsOf) -> list[MemoryUnit]:
    """The scope's units ``flt`` matches (only those visible at ``at`` unless it includes the
    expired), each with its ends known at ``at`` and its recalls, by creation."""
    seen = []
    for unit in _matching(tables, scope, flt):
        edges = [e for e in tables.edges_to(unit.id) if e.expired_at <= at.known]
        if not flt.include_expired and not _visible_at(unit, edges, at):
            continue
        last, count = tables.recalls(unit.id)
        time: TemporalMeta = unit.time.model_copy(
            update={
                "expired_at": _earliest(*(e.expired_at for e in edges)),
                "invalid_at": _earliest(unit.time.invalid_at, *(e.invalid_at for e in edges)),
                "last_recalled_at": last,
                "recall_count": count,
            }
        )
        seen.append(unit.model_copy(update={"time": time}))
    return sorted(seen, key=lambda u: (u.time.created_at, u.id))


def _matching(tables: Tables, scope: Scope, flt: UnitFilter) -> list[MemoryUnit]:
    def ok(u: MemoryUnit) -> bool:
        return (
            u.scope == scope
            and (flt.ids is None or u.id in flt.ids)
            and (flt.content_hashes is None or u.content_hash in flt.content_hashes)
            and (flt.slots is None or (u.triple is not None and u.triple.slot(scope) in flt.slots))
            and (flt.kind is None or u.kind == flt.kind)
            and all(label in u.labels for label in flt.labels)
        )

    return [u for u in tables.units.values() if ok(u)]


def _visible_at(unit: MemoryUnit, edges: list[Invalidation], at: AsOf) -> bool:
    """Whether the unit is visible at ``at``, given its edges known then (docs/concepts.md)."""
    t = unit.time
    return (
        t.created_at <= at.known
        and (t.valid_at is None or t.valid_at <= at.valid)
        and (t.invalid_at is None or at.valid < t.invalid_at)
        and not any(e.invalid_at is None or e.invalid_at <= at.valid for e in edges)
    )


def _earliest(*values: datetime | None) -> datetime | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def with_edges(tables: Tables, unit: MemoryUnit) -> GroupUnit:
    """The unit as written, with its recalls, every edge to it and whether it is archived."""
    decisions = tables.decisions
    edges = sorted(
        (
            Edge(
                expired_at=e.expired_at,
                invalid_at=e.invalid_at,
                decision_id=e.decision_id,
                episode_id=decisions[e.decision_id].episode_id,
            )
            for e in tables.edges_to(unit.id)
        ),
        key=lambda e: (e.expired_at, e.decision_id),
    )
    last, count = tables.recalls(unit.id)
    time = unit.time.model_copy(update={"last_recalled_at": last, "recall_count": count})
    return GroupUnit(
        unit=unit.model_copy(update={"time": time}), edges=tuple(edges), archived=unit.id in tables.archived
    )


def edges_of(tables: Tables, unit_id: str, scope: Scope) -> UnitEdges:
    """``AuditStore.invalidations``: the edges to the unit, and those its producing decisions wrote."""
    decisions, units = tables.decisions, tables.units
    incoming = [
        InvalidatedBy(
            decision_id=e.decision_id,
            op=decisions[e.decision_id].op,
            produced_id=decisions[e.decision_id].produced_id,
            expired_at=e.expired_at,
            invalid_at=e.invalid_at,
            reason=e.reason,
        )
        for e in tables.edges
        if e.unit_id == unit_id and decisions[e.decision_id].scope == scope
    ]
    producers = {d.id for d in decisions.values() if d.produced_id == unit_id and d.scope == scope}
    outgoing = [
        Superseded(
            unit_id=e.unit_id,
            content=units[e.unit_id].content,
            expired_at=e.expired_at,
            invalid_at=e.invalid_at,
            reason=e.reason,
        )
        for e in tables.edges
        if e.decision_id in producers and e.unit_id in units
    ]
    return UnitEdges(incoming=tuple(incoming), outgoing=tuple(outgoing))
