"""Forgetting and archiving: erasure of a subject, deletion of one episode, the archive sweep.

- ``forget`` deletes everything of a subject in bounded batches (each its own transaction) and
  keeps an erasure record with counts but no personal content (the subject only as a hash). An
  interrupted erasure is resumed by running it again: the record is found and continued.
- ``delete_episode`` removes one episode, the units it produced and its decisions; the facts
  those decisions had invalidated are current again, because invalidation is an edge.
- ``archive`` moves units the policy's ``should_archive`` picks out of the hot indexes; they stay
  in the store (history, explain) and ``restore`` brings them back.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Callable

from ..models import MemoryUnit, Page, Scope, UnitFilter
from ..ports import MemoryIndex, MemoryPolicy

KINDS = ("units", "episodes", "entities", "decisions", "traces", "blocks", "reviews", "locks", "commits")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def forget(store, subject_type: str, subject_id: str, project_id: str | None = None, batch: int = 1_000,
           progress: Callable[[int], None] | None = None) -> dict:
    """Erase a subject (one project of it, or all). Returns the erasure id and counts per kind."""
    record = store.start_erasure(subject_type, _hash(f"{subject_type}:{subject_id}"),
                                 _hash(project_id) if project_id else "")
    totals = {k: int(record.get(k) or 0) for k in KINDS}
    while True:
        counts = store.erase_batch(subject_type, subject_id, project_id, batch)
        for kind, n in counts.items():
            totals[kind] = totals.get(kind, 0) + n
        done = not any(counts.values())
        store.update_erasure(record["id"], totals, done)
        if progress:
            progress(sum(counts.values()))
        if done:
            return {"erasure_id": record["id"], **totals}


def archive_candidates(store, policy: MemoryPolicy, scope: Scope, now: datetime) -> list[MemoryUnit]:
    """Units of the scope the policy would archive now (not already archived)."""
    archived = store.archived_ids(scope)
    picked, page = [], Page(limit=5_000)
    while True:
        chunk = store.list_units(scope, UnitFilter(include_expired=True), page)
        picked += [u for u in chunk if u.id not in archived and policy.should_archive(u, now)]
        if len(chunk) < page.limit:
            return picked
        page = Page(offset=page.offset + page.limit, limit=page.limit)


def archive(store, index: MemoryIndex, policy: MemoryPolicy, scope: Scope, now: datetime,
            dry_run: bool = False) -> list[MemoryUnit]:
    """Archive what the policy picks; with ``dry_run`` only list it."""
    units = archive_candidates(store, policy, scope, now)
    if units and not dry_run:
        ids = [u.id for u in units]
        store.set_archived(scope, ids, now)  # store first, then the index
        index.remove(scope, ids)
    return units


def restore(store, index: MemoryIndex, scope: Scope, unit_ids: list[str]) -> int:
    """Bring archived units back into search."""
    restored = store.set_archived(scope, unit_ids, None)
    units = store.list_units(scope, UnitFilter(ids=tuple(unit_ids), include_expired=True), Page(limit=len(unit_ids) or 1))
    index.upsert(units)
    return restored
