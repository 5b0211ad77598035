"""The records an export holds, one model per ``RecordKind``, and how to read a list of them as one kind."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from graphmem.domain.models import (
    Decision,
    Deletion,
    Entity,
    Episode,
    Invalidation,
    MemoryBlock,
    MemoryUnit,
    ReviewItem,
    StoredTrace,
    Usage,
)

#: A stored record of one of the ``RecordKind`` kinds, as an export holds it.
Record = (
    Episode | Entity | MemoryUnit | Deletion | Decision | Invalidation | Usage | MemoryBlock | ReviewItem | StoredTrace
)

R = TypeVar("R", bound=Record)


def of(model: type[R], records: Iterable[tuple[str, Record]]) -> list[tuple[str, R]]:
    """Records of one kind, with where each was read, typed as that kind's model."""
    typed: list[tuple[str, R]] = []
    for where, record in records:
        if not isinstance(record, model):
            raise TypeError(f"a {type(record).__name__} among the {model.__name__} records")
        typed.append((where, record))
    return typed


def each(model: type[R], records: Iterable[Record]) -> list[R]:
    """``of`` without the where."""
    return [r for _, r in of(model, (("", r) for r in records))]
