"""The JSON form of stored records: an export's lines (``graphmem.pipelines.exchange``), and how
every face shows a stored record, so a record looks the same wherever it is read.

- Times are ISO 8601 in UTC with the offset written ``+00:00``, at full precision: a known-at
  replay or an export must give back the exact instant. Absent times are ``null``.
- A scope is its ``TYPE:ID`` string under ``"scope"``, with its project under ``"project"``.
- Enums are their values; tuples are lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from graphmem.domain.models import (
    AssembleTrace,
    Candidate,
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
    Usage,
)


def time(value: datetime | None) -> str | None:
    """An instant as ISO 8601 UTC (``2023-05-08T13:56:00.123456+00:00``), or None."""
    return value.astimezone(UTC).isoformat() if value is not None else None


def scope(value: Scope) -> dict[str, str | None]:
    """``{"scope": "TYPE:ID", "project": id or None}``."""
    return {"scope": f"{value.subject_type.value}:{value.subject_id}", "project": value.project_id}


def plain(value: Any) -> Any:
    """Python-mode model dumps to JSON values: times through ``time``, enums to values."""
    if isinstance(value, datetime):
        return time(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def scoped(model: Any, **extra: Any) -> dict[str, Any]:
    """A model's fields with its scope written as ``scope``/``project``."""
    return {**plain(model.model_dump(exclude={"scope"})), **scope(model.scope), **extra}


def candidate(value: Candidate) -> dict[str, Any]:
    """A candidate inside a record of the same scope: without the repeated scope."""
    result: dict[str, Any] = plain(value.model_dump(exclude={"scope"}))
    return result


def header(value: Scope, exported_at: datetime, format_name: str, version: int) -> dict[str, Any]:
    """The first line of an export: what it is and whose records follow."""
    return {
        "type": "header",
        "format": format_name,
        "version": version,
        **scope(value),
        "exported_at": time(exported_at),
    }


def unit(value: MemoryUnit) -> dict[str, Any]:
    """A memory unit with its source, both time axes and its triple."""
    return scoped(value)


def episode(value: Episode) -> dict[str, Any]:
    """An episode with its structured facts (the ingest line's fields)."""
    return scoped(value)


def entity(value: Entity) -> dict[str, Any]:
    """An entity: its id, name as first written, normalised name and when it was first named."""
    return scoped(value)


def deletion(value: Deletion) -> dict[str, Any]:
    """The content-free record of an episode deletion."""
    return scoped(value)


def decision(value: Decision) -> dict[str, Any]:
    """A decision whole, with its timeline event's candidate and order as stored."""
    event = value.event
    return scoped(
        value,
        event=None
        if event is None
        else {
            **plain(event.model_dump(exclude={"candidate"})),
            "candidate": None if event.candidate is None else candidate(event.candidate),
        },
    )


def invalidation(value: Invalidation) -> dict[str, Any]:
    """An invalidation edge: the unit, the decision it hangs from, both times and the reason."""
    result: dict[str, Any] = plain(value.model_dump())
    return result


def usage(value: Usage) -> dict[str, Any]:
    """A unit's recall statistics and archive state."""
    return scoped(value)


def block(value: MemoryBlock) -> dict[str, Any]:
    """A resident block."""
    return scoped(value)


def review(value: ReviewItem) -> dict[str, Any]:
    """A candidate held for review (its candidate without the repeated scope)."""
    return scoped(value, candidate=candidate(value.candidate))


def trace(value: AssembleTrace) -> dict[str, Any]:
    """A stored assembly trace: what it loaded and recalled, and its token count (and the
    score of each recalled unit, from a ``StoredTrace``)."""
    return scoped(value)


#: The JSON form of each kind of record.
SHAPES: dict[RecordKind, Callable[[Any], dict[str, Any]]] = {
    "episode": episode,
    "entity": entity,
    "unit": unit,
    "deletion": deletion,
    "decision": decision,
    "invalidation": invalidation,
    "usage": usage,
    "block": block,
    "review": review,
    "trace": trace,
}
