"""A write's commit and an episode's deletion in an in-memory store (``graphmem.ports.TimelineStore``).
The caller holds ``Tables.lock``."""

from __future__ import annotations

from graphmem.adapters.memory.tables import Tables, Version
from graphmem.domain.mentions import digest
from graphmem.domain.models import (
    Decision,
    Deletion,
    MemoryUnit,
    Relink,
    ReviewItem,
    Rewrite,
    Scope,
    WriteBatch,
    normalise,
)
from graphmem.errors import Conflict, NotFound, episodes_gone

__all__ = ["commit", "delete_episode"]


def commit(tables: Tables, batch: WriteBatch, scope: Scope, relink: Relink | None) -> None:
    """``TimelineStore.commit``: check the whole batch, then write it all."""
    _check(tables, batch, scope)
    batch = _hold_names(tables, scope, batch, relink)
    new_units = {u.id: u for u in batch.units}
    tables.units.update(new_units)
    tables.name_entities(batch.units)
    tables.vectors.update({uid: v for uid, v in batch.vectors.items() if uid in new_units})
    tables.decisions.update({d.id: d for d in batch.decisions})
    tables.edges.extend(batch.invalidations)
    tables.reviews.update({r.id: r for r in batch.reviews})
    for eid in batch.decided:
        tables.undecided.pop((scope.key, eid), None)
    for uid in batch.unarchive:
        tables.archived.pop(uid, None)
    tables.mention(scope, batch)


def _check(tables: Tables, batch: WriteBatch, scope: Scope) -> None:
    """Raise what ``commit`` raises, before it writes anything."""
    records: tuple[MemoryUnit | Decision | ReviewItem, ...] = (*batch.units, *batch.decisions, *batch.reviews)
    for record in records:
        if record.scope != scope:
            raise Conflict(f"{type(record).__name__} {record.id} is not in scope {scope}")
    view = tables.view(scope)
    stale = [g for g, v in batch.guards.items() if len(view.group_events.get(g, ())) != v]
    if stale:
        raise Conflict(f"{len(stale)} guarded group(s) changed since read; re-plan the write")
    new_units = {u.id for u in batch.units}
    if new_units & tables.units.keys() or len(new_units) != len(batch.units):
        raise Conflict("a unit with that id already exists; units are written once")
    in_scope = view.units.keys() | new_units
    for d in batch.decisions:
        for uid in (d.target_id, d.produced_id):
            if uid is not None and uid not in in_scope:
                raise NotFound(f"decision {d.id} names unit {uid}, not in scope {scope}")
    gone = {
        d.episode_id
        for d in batch.decisions
        if d.episode_id is not None and (scope.key, d.episode_id) not in tables.episodes
    }
    if gone:
        raise episodes_gone(len(gone), scope)
    decisions = {d.id for d in batch.decisions} | view.decisions
    for inv in batch.invalidations:
        if inv.unit_id not in in_scope or inv.decision_id not in decisions:
            raise NotFound(f"an invalidation names a unit or decision not in scope {scope}")


def _hold_names(tables: Tables, scope: Scope, batch: WriteBatch, relink: Relink | None) -> WriteBatch:
    """The batch with its mention links drawn again when another writer made names known since
    it was planned (``UnitStore.commit``), the scope's versions counted as ``Neo4jStore`` counts them."""
    names = tables.names.get(scope, Version(0, None))
    texts = tables.texts.get(scope, Version(0, None))
    if batch.anchors:
        tables.names[scope] = Version(names.number + 1, digest(batch.anchors))
    if batch.changes_texts:
        tables.texts[scope] = Version(texts.number + 1, batch.texts_key)
    return batch.held(names, texts, relink, lambda texts: tables.view(scope).names.find(texts))


def delete_episode(
    tables: Tables, episode_id: str, scope: Scope, rewrite: Rewrite, deletion: Deletion
) -> Deletion | None:
    """``TimelineStore.delete_episode``: the episode, what it derived and its links go; the
    timelines it touched are rewritten."""
    if (scope.key, episode_id) not in tables.episodes:
        return None
    tables.texts_changed(scope)
    units = {k for k, u in tables.units.items() if u.source.episode_id == episode_id and u.scope == scope}
    units |= set(rewrite.drop_units)
    decisions = {k for k, d in tables.decisions.items() if d.episode_id == episode_id and d.scope == scope}
    dropped = set(rewrite.drop_edges)
    tables.edges = [
        e
        for e in tables.edges
        if e.decision_id not in decisions
        and e.unit_id not in units
        and (e.unit_id, e.decision_id, e.expired_at) not in dropped
    ]
    for k in units:
        del tables.units[k]
        tables.usage.pop(k, None)
        tables.vectors.pop(k, None)
        tables.unit_mentions.pop(k, None)
        tables.archived.pop(k, None)
    tables.episode_mentions.pop((scope.key, episode_id), None)
    for k in decisions:
        del tables.decisions[k]
    del tables.episodes[(scope.key, episode_id)]
    tables.undecided.pop((scope.key, episode_id), None)
    tables.scoped.reset()
    record = deletion.model_copy(update={"units": len(units), "decisions": len(decisions)})
    tables.deletions[record.id] = record
    commit(tables, rewrite.add, scope, None)
    _unlink_unknown(tables, scope)
    return record


def _unlink_unknown(tables: Tables, scope: Scope) -> None:
    """Drop the links of the scope's texts to names that only deleted texts made known."""
    facts, seen = set(map(normalise, tables.facts(scope))), set(map(normalise, tables.seen(scope)))
    units, episodes = tables.units, tables.episodes
    owners = [names for k, names in tables.unit_mentions.items() if k in units and units[k].scope == scope]
    owners += [names for k, names in tables.episode_mentions.items() if k in episodes and episodes[k].scope == scope]
    for names in owners:
        for norm in [
            k
            for k, mention in names.items()
            if (mention.kind == "fact" and k not in facts) or (mention.kind == "known" and k not in seen)
        ]:
            del names[norm]
