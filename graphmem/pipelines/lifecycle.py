"""Forgetting and archiving: erasure of a subject, deletion of one episode, the archive sweep.

- ``forget`` deletes a subject in bounded batches, each one transaction that adds what it
  deleted to the erasure record (docs/security.md, "Erasure"); run again, it resumes.
- ``delete_episode`` removes one episode, its units and decisions as if never made, at every
  system time: the timelines it touched are re-derived from what remains
  (``graphmem.domain.timeline.replay``), the changes hung from a content-free deletion record,
  all in one transaction.
- ``archive`` moves the units the policy's ``should_archive`` picks out of search; they stay in
  the store, and ``restore`` brings them back. Archive changes what search shows now, never
  what is true.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from graphmem.domain import timeline
from graphmem.domain.models import (
    Decision,
    Deletion,
    GroupUnit,
    Invalidation,
    MemoryUnit,
    Op,
    Page,
    Rewrite,
    Scope,
    UnitFilter,
    WriteBatch,
    utcnow,
)
from graphmem.pipelines.write.timelines import DrawnUnit, EdgeEnd, as_event, day, drawn, unit_showing
from graphmem.ports import ErasureStore, MemoryIndex, MemoryPolicy, TimelineStore, UnitStore


def forget(
    store: ErasureStore,
    subject_type: str,
    subject_id: str,
    project_id: str | None = None,
    batch: int = 1_000,
    progress: Callable[[int], None] | None = None,
    actor: str | None = None,
) -> dict[str, Any]:
    """Erase a subject (one project of it, or all). Returns the erasure id, who asked for it
    (``actor``, kept on the record) and counts per kind: what its record counted, resumed runs
    included."""
    record = store.start_erasure(subject_type, subject_id, project_id, actor=actor)
    while record.status != "done":
        before = sum(record.counts.values())
        record = store.erase_batch(record.id, subject_type, subject_id, project_id, batch)
        if progress:
            progress(sum(record.counts.values()) - before)
    return {"erasure_id": record.id, "actor": record.actor, **record.counts}


def archive_candidates(store: UnitStore, policy: MemoryPolicy, scope: Scope, now: datetime) -> list[MemoryUnit]:
    """Units of the scope the policy would archive now (not already archived)."""
    archived = store.archived_ids(scope)
    picked, page = [], Page(limit=5_000)
    while True:
        chunk = store.list_units(scope, UnitFilter(include_expired=True), page)
        picked += [u for u in chunk if u.id not in archived and policy.should_archive(u, now)]
        if len(chunk) < page.limit:
            return picked
        page = Page(offset=page.offset + page.limit, limit=page.limit)


def archive(
    store: UnitStore, policy: MemoryPolicy, scope: Scope, now: datetime, dry_run: bool = False
) -> list[MemoryUnit]:
    """Archive what the policy picks (its search entries leave search with it); with
    ``dry_run`` only list it."""
    units = archive_candidates(store, policy, scope, now)
    if units and not dry_run:
        store.set_archived(scope, [u.id for u in units], now)
    return units


def restore(store: UnitStore, scope: Scope, unit_ids: list[str]) -> int:
    """Bring archived units back into search."""
    return store.set_archived(scope, unit_ids, None)


def delete_episode(
    store: TimelineStore,
    index: MemoryIndex,
    scope: Scope,
    episode_id: str,
    now: datetime | None = None,
    actor: str | None = None,
) -> dict[str, Any] | None:
    """Delete an episode as if it had never been written and re-derive the timelines it
    touched. Returns what was removed and which units are current again (None: no such episode).
    ``actor`` is kept on the deletion record and its decisions."""
    now = now or utcnow()
    groups = sorted(store.episode_groups(scope, episode_id))
    events, units = store.group_state(scope, groups)
    deletion = Deletion(scope=scope, episode_id=episode_id, deleted_at=now, actor=actor)
    rewrite, restored = _rederive(scope, episode_id, events, units, deletion)
    # Units the re-derivation writes get their search entries in the same transaction.
    added = rewrite.add.units
    vectors = dict(zip((u.id for u in added), index.vectors([u.searched for u in added])))
    rewrite = rewrite.model_copy(update={"add": rewrite.add.model_copy(update={"vectors": vectors})})
    record = store.delete_episode(episode_id, scope, rewrite, deletion)
    if record is None:
        return None
    return {
        "deletion_id": record.id,
        "units": record.units,
        "decisions": record.decisions,
        "restored": restored,
        "rederived": len(rewrite.add.decisions),
        "actor": actor,
    }


def _rederive(
    scope: Scope, episode_id: str, events: list[Decision], units: list[GroupUnit], deletion: Deletion
) -> tuple[Rewrite, list[str]]:
    """The records that turn what is stored into what the log without ``episode_id`` draws."""
    now = deletion.deleted_at
    reason = f"episode {episode_id} deleted"
    drop_units: list[str] = []
    drop_edges: list[tuple[str, str, datetime]] = []
    add_units: list[MemoryUnit] = []
    add_edges: list[Invalidation] = []
    decisions: list[Decision] = []
    restored: list[str] = []
    # Kept units that lost edges with the episode's decisions: their entries change too.
    respan = {
        u.unit.id
        for u in units
        if u.unit.source.episode_id != episode_id and any(e.episode_id == episode_id for e in u.edges)
    }
    for group in sorted({d.logged.group for d in events} | {g for u in units if (g := u.unit.group) is not None}):
        log = [d for d in events if d.logged.group == group and d.episode_id != episode_id]
        kept = {u.unit.id: u for u in units if u.unit.group == group and u.unit.source.episode_id != episode_id}
        single = any(d.logged.single for d in events if d.logged.group == group)
        want_units, want_edges = timeline.replay([as_event(d) for d in log], single)
        owners = {d.id: d for d in log}
        wanted = {u.id for u in want_units}
        drop_units += [uid for uid in kept if uid not in wanted]
        stored = {
            (uid, e.expired_at, e.invalid_at): e.decision_id
            for uid, u in kept.items()
            if uid in wanted
            for e in u.edges
            if e.episode_id != episode_id
        }
        want = {(e.unit_id, e.at, e.invalid_at): e for e in want_edges}
        drop_edges += [(key[0], did, key[1]) for key, did in stored.items() if key not in want]
        contents = {uid: u.unit.content for uid, u in kept.items()}
        for nu in want_units:
            if nu.id in kept:
                continue
            unit = unit_showing(owners[nu.owner], nu, scope)
            contents[unit.id] = unit.content
            add_units.append(unit)
            decisions.append(
                Decision(
                    op=Op.ADD,
                    produced_id=unit.id,
                    scope=scope,
                    policy="timeline",
                    decided_at=now,
                    deletion_id=deletion.id,
                    candidate=unit.content,
                    actor=deletion.actor,
                    reason=f"{reason}: {unit.content!r} holds from {day(nu.start)} until {day(nu.end)}",
                )
            )
        changed: dict[str, Decision] = {}
        for key, e in sorted(want.items(), key=lambda kv: (kv[1].at, kv[1].unit_id)):
            if key in stored:
                continue
            d = changed.get(e.unit_id)
            if d is None:
                cause = owners[e.cause]
                begins = cause.logged.candidate.content if cause.logged.candidate else cause.reason
                what = (
                    f"now ends {day(e.invalid_at)}, where {begins!r} begins"
                    if e.why == "ended"
                    else "no longer holds from then"
                )
                d = changed[e.unit_id] = Decision(
                    op=Op.UPDATE,
                    target_id=e.unit_id,
                    scope=scope,
                    policy="timeline",
                    decided_at=now,
                    deletion_id=deletion.id,
                    candidate=contents.get(e.unit_id),
                    actor=deletion.actor,
                    reason=f"{reason}: {contents.get(e.unit_id)!r} {what}",
                )
                decisions.append(d)
            add_edges.append(
                Invalidation(
                    unit_id=e.unit_id, decision_id=d.id, expired_at=e.at, invalid_at=e.invalid_at, reason=d.reason
                )
            )
        # What is current now after the re-derivation, that was not before it.
        before = {
            s.id
            for s in timeline.shown(drawn([u for u in units if u.unit.group == group]), now)
            if timeline.covers(s, now)
        }
        ends: dict[str, list[EdgeEnd]] = {}
        for e in want_edges:
            ends.setdefault(e.unit_id, []).append(EdgeEnd(e.at, e.invalid_at))
        redrawn = [DrawnUnit(u.id, u.owner, u.start, u.end, u.at, ends.get(u.id, [])) for u in want_units]
        after = timeline.shown(redrawn, now)
        restored += sorted(s.id for s in after if timeline.covers(s, now) and s.id not in before)
    add = WriteBatch(units=tuple(add_units), decisions=tuple(decisions), invalidations=tuple(add_edges))
    dropped = set(drop_units)
    respan |= {uid for uid, _, _ in drop_edges} | {e.unit_id for e in add_edges}
    return (
        Rewrite(
            drop_units=tuple(drop_units), drop_edges=tuple(drop_edges), add=add, respan=tuple(sorted(respan - dropped))
        ),
        restored,
    )
