"""Listings: what a subject holds, page by page. Units newest first by ``(created_at, id)`` and
entities by normalised name, each paged by keyset (``UnitKey``, a name): keys never change, so a
listing paged to its end shows every record that existed when it began exactly once, whatever is
written meanwhile."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field

from graphmem.domain.models.base import Model, UTCDatetime
from graphmem.domain.models.scope import MemoryKind
from graphmem.domain.models.units import MemoryUnit

#: Characters a listing's text filter or name prefix may hold.
MAX_FILTER_CHARS = 200


class UnitStatus(str, Enum):
    """A unit's standing at a point (T, S), among the units known at S.

    - ``current``: visible at (T, S);
    - ``ended``: true until an end at or before T (as known at S);
    - ``retracted``: no longer believed at S for any world time (retracted, retired by a
      re-extraction, or replaced from its very start). A unit closed only because a longer
      stretch of the same assertion continues it is neither ended nor retracted.
    """

    current = "current"
    ended = "ended"
    retracted = "retracted"


class Standing(str, Enum):
    """A standing to list, as the faces take it: one ``UnitStatus``, or ``all`` of them."""

    current = "current"
    ended = "ended"
    retracted = "retracted"
    all = "all"

    @property
    def status(self) -> UnitStatus | None:
        """The ``UnitStatus`` to list (None: every unit, whatever its standing)."""
        return None if self is Standing.all else UnitStatus(self.value)


FilterText = Annotated[str, Field(min_length=1, max_length=MAX_FILTER_CHARS)]


class UnitQuery(Model):
    """Which units a listing shows: every given field must match."""

    kind: MemoryKind | None = None
    #: Units about or naming this entity (resolved by normalised name within the scope).
    entity: FilterText | None = None
    #: Case-insensitive text the unit's content holds.
    contains: FilterText | None = None
    #: None: every unit known at S, whatever its standing.
    status: UnitStatus | None = None


class UnitKey(Model):
    """A unit's place in a listing: newest first by ``created_at``, then by id descending."""

    created_at: UTCDatetime
    id: str


class EntitySummary(Model):
    """An entity as a listing shows it."""

    id: str
    name: str
    #: Other spellings its facts write it with (the same normalised name), sorted.
    aliases: tuple[str, ...] = ()
    #: Facts about it visible at the listing's point (T, S).
    facts: Annotated[int, Field(ge=0)] = 0
    #: The latest system time a fact about it was written or ended (None: no fact is about it).
    last_change: UTCDatetime | None = None


class UnitPage(Model):
    """One page of a unit listing, and the cursor of the next (None after the last)."""

    units: tuple[MemoryUnit, ...]
    next_cursor: str | None = None


class EntityPage(Model):
    """One page of an entity listing, and the cursor of the next (None after the last)."""

    entities: tuple[EntitySummary, ...]
    next_cursor: str | None = None
