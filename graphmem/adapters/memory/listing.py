"""Listings of an in-memory store (``UnitStore.page_units``, ``page_entities``): what the
``cypher/listing`` queries read on Neo4j. The caller holds ``Tables.lock``."""

from __future__ import annotations

from datetime import datetime

from graphmem.adapters.memory.tables import Tables
from graphmem.adapters.memory.units import units_at
from graphmem.domain.models import (
    AsOf,
    EntitySummary,
    Invalidation,
    MemoryUnit,
    Scope,
    UnitFilter,
    UnitKey,
    UnitQuery,
    UnitStatus,
    entity_id,
    normalise,
)

__all__ = ["entity_page", "unit_page"]


def unit_page(
    tables: Tables, scope: Scope, query: UnitQuery, at: AsOf, after: UnitKey | None, limit: int
) -> list[MemoryUnit]:
    """``UnitStore.page_units``."""
    wanted = _naming(tables, scope, query.entity) if query.entity else None
    contains = query.contains.lower() if query.contains else None
    found = []
    for unit in units_at(tables, scope, UnitFilter(kind=query.kind, include_expired=True), at):
        key = (unit.time.created_at, unit.id)
        if (
            unit.time.created_at > at.known
            or (after is not None and key >= (after.created_at, after.id))
            or (wanted is not None and unit.id not in wanted)
            or (contains is not None and contains not in unit.content.lower())
        ):
            continue
        if query.status is None or status(tables, unit, at) is query.status:
            found.append(unit)
    found.sort(key=lambda u: (u.time.created_at, u.id), reverse=True)
    return found[:limit]


def status(tables: Tables, unit: MemoryUnit, at: AsOf) -> UnitStatus | None:
    """A unit's standing at ``at`` (``UnitStatus``), ``unit`` as seen at ``at.known``; None when
    it is none of them (true only later, or closed for a continuation)."""
    edges = [e for e in tables.edges_to(unit.id) if e.expired_at <= at.known]
    closed = [e for e in edges if e.invalid_at is None]
    end = unit.time.invalid_at
    if (
        not closed
        and (unit.time.valid_at is None or unit.time.valid_at <= at.valid)
        and (end is None or at.valid < end)
    ):
        return UnitStatus.current
    if any(not _continued(tables, unit, e) for e in closed):
        return UnitStatus.retracted
    if not closed and end is not None and end <= at.valid:
        return UnitStatus.ended
    return None


def _continued(tables: Tables, unit: MemoryUnit, edge: Invalidation) -> bool:
    """Whether the edge's decision produced a unit of the same assertion: a continuation."""
    produced = tables.decisions[edge.decision_id].produced_id
    successor = tables.units.get(produced) if produced else None
    return (
        unit.source.assertion_id is not None
        and successor is not None
        and successor.source.assertion_id == unit.source.assertion_id
    )


def _naming(tables: Tables, scope: Scope, entity: str) -> set[str]:
    """Ids of the scope's units about or naming the entity."""
    norm = normalise(entity)
    return {u.id for u in tables.units.values() if u.scope == scope and norm in tables.named(u)}


def entity_page(tables: Tables, scope: Scope, at: AsOf, prefix: str, after: str, limit: int) -> list[EntitySummary]:
    """``UnitStore.page_entities``."""
    prefix, after = normalise(prefix), normalise(after)
    names = _entity_names(tables, scope)
    chosen = sorted(n for n in names if n.startswith(prefix) and n > after)[:limit]
    known = [u for u in units_at(tables, scope, UnitFilter(include_expired=True), at) if u.time.created_at <= at.known]
    return [_summary(tables, known, at, norm, entity_id(scope, names[norm]), names[norm]) for norm in chosen]


def _entity_names(tables: Tables, scope: Scope) -> dict[str, str]:
    """The scope's entities that a unit or episode is about or names, norm -> name: as the
    first fact or text that named it wrote it."""
    named: list[tuple[datetime, str]] = []
    for unit in tables.units.values():
        if unit.scope == scope:
            named += [(unit.time.created_at, n) for n in tables.named(unit).values()]
    for (key, eid), mentions in tables.episode_mentions.items():
        episode = tables.episodes.get((key, eid))
        if key == scope.key and episode is not None:
            named += [(episode.occurred_at, m.name) for m in mentions.values()]
    names: dict[str, str] = {}
    for _, name in sorted(named, key=lambda p: p[0]):
        names.setdefault(normalise(name), name)
    for entity in tables.entities.values():  # a fact's entity keeps the name its first fact wrote
        if entity.scope == scope and entity.norm in names:
            names[entity.norm] = entity.name
    return names


def _summary(tables: Tables, known: list[MemoryUnit], at: AsOf, norm: str, eid: str, name: str) -> EntitySummary:
    """An entity as listed, from the scope's units known at ``at.known`` (as seen then)."""
    about = {
        u.id: u for u in known if u.triple and norm in {normalise(n) for n in (u.triple.subject, u.triple.object) if n}
    }
    spellings = {
        n for u in about.values() if u.triple for n in (u.triple.subject, u.triple.object) if n and normalise(n) == norm
    }
    changes = [u.time.created_at for u in about.values()]
    changes += [e.expired_at for e in tables.edges if e.unit_id in about and e.expired_at <= at.known]
    return EntitySummary(
        id=eid,
        name=name,
        aliases=tuple(sorted(spellings - {name})),
        facts=sum(1 for u in about.values() if status(tables, u, at) is UnitStatus.current),
        last_change=max(changes, default=None),
    )
