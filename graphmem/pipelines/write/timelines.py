"""Timeline groups as a write reads them (``graphmem.domain.timeline`` computes with them).

- ``group_of``: the group and value of a candidate;
- ``as_event`` and ``drawn``: a stored decision and stored units in the shapes the timeline reads;
- ``Group``: one group's log and units while a batch is planned;
- ``unit_showing``: the unit that shows one stretch of an assertion.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from graphmem.domain import timeline
from graphmem.domain.models import (
    Candidate,
    Decision,
    GroupUnit,
    MemoryKind,
    MemoryUnit,
    Scope,
    SourceRef,
    TemporalMeta,
    TimelineEvent,
    normalise,
)


class GroupKey(NamedTuple):
    """Where a candidate goes: its timeline group, its value there, and whether the group is a
    single-valued slot."""

    group: str
    value: str
    single: bool


def group_of(c: Candidate, single: bool) -> tuple[str, str]:
    """(timeline group, value) of a candidate.

    - A single-valued slot holds one object at a time.
    - A multi-valued fact and a text without a triple each form a group of their own.
    - An episodic text is an event: the same words at another time are another event, so its
      group is also keyed by when it happened.
    """
    if c.triple is not None and single:
        return "slot:" + c.triple.slot(c.scope), normalise(c.triple.object or "")
    if c.triple is not None:
        t = c.triple
        key = f"{c.scope.key}\x1f{normalise(t.subject)}\x1f{normalise(t.predicate)}\x1f{normalise(t.object or '')}"
        return "fact:" + hashlib.sha256(key.encode()).hexdigest()[:32], normalise(t.object or "")
    key = f"{c.scope.key}\x1f{c.kind.value}\x1f{c.content_hash}"
    if c.kind is MemoryKind.episodic and c.valid_at is not None:
        key += f"\x1f{c.valid_at.isoformat()}"
    return "text:" + hashlib.sha256(key.encode()).hexdigest()[:32], c.content_hash


def as_event(d: Decision) -> timeline.Event:
    """A decision's log entry in the shape ``graphmem.domain.timeline`` computes with."""
    e = d.logged
    return timeline.Event(
        id=d.id,
        kind=e.kind,
        value=e.value,
        known=d.decided_at,
        order=(e.order_at, e.order_ep, e.order_fact),
        valid_at=e.valid_at,
        end=e.end,
        target=e.target,
    )


def retracts(retraction: TimelineEvent, assertions: Sequence[Decision]) -> bool:
    """Whether ``retraction`` takes back one of ``assertions``: an earlier assertion of its value
    in its group (as ``graphmem.domain.timeline`` applies a retraction)."""
    order = (retraction.order_at, retraction.order_ep, retraction.order_fact)
    return any(
        a.event is not None
        and a.event.kind == "assert"
        and a.event.group == retraction.group
        and a.event.value == retraction.value
        and (a.event.order_at, a.event.order_ep, a.event.order_fact) < order
        for a in assertions
    )


class EdgeEnd(NamedTuple):
    """An invalidation edge as a stretch reads it: when it was written, and the world time it
    ends the unit at (None: the unit is withdrawn)."""

    expired_at: datetime
    invalid_at: datetime | None


class DrawnUnit(NamedTuple):
    """A stored unit as ``timeline.shown`` reads it: the stretch of its owner's assertion it
    was written to show, and the edges written on it since."""

    id: str
    owner: str
    valid_at: datetime | None
    own_end: datetime | None
    created_at: datetime
    edges: Sequence[EdgeEnd]


def drawn(units: Sequence[GroupUnit]) -> list[DrawnUnit]:
    """Stored units in the shape ``timeline.shown`` reads."""
    return [
        DrawnUnit(
            g.unit.id,
            g.unit.source.assertion_id or g.unit.id,
            g.unit.time.valid_at,
            g.unit.time.invalid_at,
            g.unit.time.created_at,
            [EdgeEnd(e.expired_at, e.invalid_at) for e in g.edges],
        )
        for g in units
    ]


def day(t: datetime | None) -> str:
    """A world time in a reason: its day, or the open end."""
    return t.date().isoformat() if t else "the open end"


def unit_showing(owner: Decision, stretch: timeline.NewUnit, scope: Scope) -> MemoryUnit:
    """The unit showing one stretch of ``owner``'s assertion."""
    ev = owner.logged
    c = ev.asserted
    return MemoryUnit(
        id=stretch.id,
        kind=c.kind,
        scope=scope,
        content=c.content,
        content_hash=c.content_hash,
        source=SourceRef(
            episode_id=owner.episode_id or "",
            channel=ev.channel or "chat",
            extractor_version=ev.extractor_version or "unknown",
            assertion_id=owner.id,
            occurred_at=ev.occurred_at,
        ),
        time=TemporalMeta(created_at=stretch.at, valid_at=stretch.start, invalid_at=stretch.end),
        confidence=c.confidence,
        labels=c.labels,
        triple=c.triple,
        group=ev.group,
    )


@dataclass
class Group:
    """One timeline group while a batch is planned: its stored log and units, plus the log
    entries this batch adds."""

    single: bool
    events: list[Decision]
    units: list[GroupUnit]

    def standing(self, at: datetime) -> list[timeline.Event]:
        return timeline.active([as_event(d) for d in self.events], at)

    def alive(self, at: datetime) -> dict[str, timeline.Shown]:
        return {s.id: s for s in timeline.shown(drawn(self.units), at)}

    def owners(self, value: str) -> set[str]:
        """The assertions (and endings, retractions) of ``value`` in the log."""
        return {d.id for d in self.events if d.logged.value == value}

    def covering(self, at: datetime, owners: set[str]) -> list[MemoryUnit]:
        """Units of these owners alive at system time ``at`` that show world time ``at``."""
        alive = self.alive(at)
        return [
            u.unit
            for u in self.units
            if u.unit.id in alive and u.unit.source.assertion_id in owners and timeline.covers(alive[u.unit.id], at)
        ]

    def alive_of(self, owners: set[str], at: datetime) -> list[MemoryUnit]:
        """Units of these owners alive at system time ``at``."""
        alive = self.alive(at)
        return [g.unit for g in self.units if g.unit.id in alive and g.unit.source.assertion_id in owners]

    def showing(self, value: str, now: datetime) -> str | None:
        """A unit alive now showing ``value`` at world time now, else at any time."""
        owners = self.owners(value)
        pick = self.covering(now, owners) or self.alive_of(owners, now)
        return pick[0].id if pick else None

    def ending(self, value: str, end: datetime | None, now: datetime) -> MemoryUnit | None:
        """A unit alive now showing ``value`` over a stretch that ``end`` falls inside."""
        owners = self.owners(value)
        alive = self.alive(now)
        return next(
            (
                g.unit
                for g in self.units
                if g.unit.id in alive
                and g.unit.source.assertion_id in owners
                and end is not None
                and timeline.covers(alive[g.unit.id], end)
                and ((start := alive[g.unit.id].start) is None or start < end)
            ),
            None,
        )

    def shown_by(self, owner: str, now: datetime) -> str | None:
        """A unit alive now showing a stretch of ``owner``'s assertion."""
        return next((u.id for u in self.alive_of({owner}, now)), None)

    def text(self, unit_id: str | None, default: str) -> str:
        """The content of one of the group's units, or ``default``."""
        return next((g.unit.content for g in self.units if g.unit.id == unit_id), default)

    @property
    def archived(self) -> set[str]:
        return {u.unit.id for u in self.units if u.archived}
