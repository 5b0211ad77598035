"""Erasing a subject from an in-memory store in batches, with its erasure record
(``graphmem.ports.ErasureStore``). The caller holds ``Tables.lock``."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from graphmem.adapters.memory.tables import Tables
from graphmem.domain.models import Erasure, Scope, erasure_keys, new_id, utcnow

__all__ = ["erase_batch", "erasures_of", "start_erasure"]


def start_erasure(
    tables: Tables, secret: bytes, subject_type: str, subject_id: str, project_id: str | None, actor: str | None
) -> Erasure:
    """The running erasure record of the subject (and project), else a new one."""
    subject_key, project_key = erasure_keys(secret, subject_type, subject_id, project_id)
    running = [
        r
        for r in tables.erasures.values()
        if (r.subject_hash, r.project_hash, r.status) == (subject_key, project_key, "running")
    ]
    record = (
        running[0]
        if running
        else Erasure(
            id=new_id(),
            subject_type=subject_type,
            status="running",
            subject_hash=subject_key,
            project_hash=project_key,
            actor=actor,
            key="hmac-sha256",
            started_at=utcnow(),
        )
    )
    tables.erasures[record.id] = record
    return record


def erasures_of(tables: Tables, secret: bytes, scope: Scope) -> list[Erasure]:
    """The erasure records of the scope: of its subject with every project, or of its project."""
    subject_key, project_key = erasure_keys(secret, scope.subject_type.value, scope.subject_id, scope.project_id)
    return [
        r for r in tables.erasures.values() if r.subject_hash == subject_key and r.project_hash in ("", project_key)
    ]


def erase_batch(tables: Tables, erasure_id: str, mine: Callable[[Scope], bool], batch: int) -> Erasure:
    """Delete at most ``batch`` records of each kind whose scope is ``mine``, and what hangs from
    them; add the counts to the erasure record, done when nothing was left."""
    counts: dict[str, int] = {}
    owned: tuple[tuple[str, dict[Any, Any]], ...] = (
        ("units", tables.units),
        ("episodes", tables.episodes),
        ("decisions", tables.decisions),
        ("traces", tables.traces),
        ("entities", tables.entities),
        ("blocks", tables.blocks),
        ("reviews", tables.reviews),
        ("jobs", tables.jobs),
    )
    for name, table in owned:
        counts[name] = _drop(table, [k for k, v in table.items() if mine(v.scope)][:batch])
    tables.scoped.reset()
    for scope in [s for s in tables.names if mine(s)]:
        del tables.names[scope]
    orphans: tuple[tuple[dict[Any, Any], Collection[Any]], ...] = (
        (tables.vectors, tables.units),
        (tables.archived, tables.units),
        (tables.unit_mentions, tables.units),
        (tables.episode_mentions, tables.episodes),
        (tables.undecided, tables.episodes),
        (tables.trace_scores, tables.traces),
    )
    for table, kept in orphans:
        _drop(table, [k for k in table if k not in kept])
    counts["usage"] = _drop(tables.usage, [k for k in tables.usage if k not in tables.units][:batch])
    counts["deletions"] = _drop(tables.deletions, [k for k, d in tables.deletions.items() if mine(d.scope)][:batch])
    tables.edges = [e for e in tables.edges if e.unit_id in tables.units and e.decision_id in tables.decisions]
    record = tables.erasures[erasure_id]
    record = tables.erasures[erasure_id] = record.model_copy(
        update={
            **{kind: getattr(record, kind) + n for kind, n in counts.items()},
            "status": "running" if any(counts.values()) else "done",
            "updated_at": utcnow(),
        }
    )
    return record


def _drop(table: dict[Any, Any], keys: list[Any]) -> int:
    for key in keys:
        del table[key]
    return len(keys)
