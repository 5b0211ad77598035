"""Timelines: what the write pipeline makes true on the world-time axis, whatever order facts
arrive in. Pure functions, no I/O.

A *group* is a set of assertions that compete or merge on the world-time axis:

- a single-valued slot (a subject and a single-valued predicate) holds at world time T the value
  of the assertion with the latest ``valid_at <= T`` (equal ``valid_at``: the later in
  ``Event.order``), until that assertion's own end;
- a value group (a multi-valued fact; or a text without a triple, by kind and content hash) is
  true at T when any of its assertions covers T.

A group's log of ``Event`` s, drawn at a system time, gives ``Stretch`` es, each shown by one
unit. ``step`` turns the units alive before a system time into those of it; ``replay`` draws a
whole log, which is how an episode's deletion re-derives a group.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal

#: Open ends, for comparisons only (never stored): a time equal to one reads as no time, so a
#: fact may not give END_OF_TIME (``graphmem.domain.models.Fact``).
_MIN = datetime.min.replace(tzinfo=UTC)
END_OF_TIME = datetime.max.replace(tzinfo=UTC)

#: (when the asserting episode was first extracted, its place in that write, the fact's place in
#: the episode): it breaks ties of ``valid_at`` and decides what a retraction reaches.
#: Re-extracted facts keep their episode's order, so they stand where the facts they replace stood.
Order = tuple[datetime, int, int]
EventKind = Literal["assert", "end", "retract", "retire"]


def _start(t: datetime | None) -> datetime:
    return _MIN if t is None else t


def _end(t: datetime | None) -> datetime:
    return END_OF_TIME if t is None else t


@dataclass(frozen=True)
class Event:
    """One entry of a group's log, counting from its ``known`` system time.

    - ``assert``: a value from ``valid_at`` until its own ``end`` (None: open);
    - ``end``: the value stopped being true at ``end``: every assertion of it starting before
      then ends there at the latest, whatever order they came in;
    - ``retract``: removes the assertions and endings of its value before it in ``order``;
    - ``retire``: removes the event ``target`` (re-extraction replaced its episode's facts).
    """

    id: str
    kind: EventKind
    value: str
    known: datetime
    order: Order
    valid_at: datetime | None = None
    end: datetime | None = None
    #: ``retire``: the id of the event it retires.
    target: str | None = None


@dataclass(frozen=True)
class Stretch:
    """A maximal run of one value on the world axis, owned by the assertion that starts it and
    shown by one unit. Units never change: a stretch that shrinks gets an edge ending its unit;
    one that grows closes its unit, and a new unit of the same owner shows it; a unit whose
    stretch is gone is closed."""

    owner: str
    value: str
    start: datetime | None
    end: datetime | None


@dataclass(frozen=True)
class Shown:
    """A unit of a group as seen at some system time: the stretch it shows, as far as known."""

    id: str
    owner: str
    start: datetime | None
    end: datetime | None


@dataclass(frozen=True)
class NewUnit:
    id: str
    owner: str
    start: datetime | None
    end: datetime | None
    at: datetime


#: Why an edge was written: its stretch ended earlier, it is closed because its stretch grew
#: (a continuation shows it), or its stretch is gone (retracted, retired, superseded).
Why = Literal["ended", "continued", "withdrawn"]


@dataclass(frozen=True)
class NewEdge:
    unit_id: str
    at: datetime
    invalid_at: datetime | None
    why: Why
    #: The event of this system time that caused it.
    cause: str


def unit_id(owner: str, at: datetime, end: datetime | None) -> str:
    """The id of the unit showing ``owner``'s stretch from system time ``at`` until ``end``:
    deterministic, so re-deriving a log reproduces the ids already stored, and a unit that
    would show another end gets another id."""
    key = f"{owner}\x1f{at.isoformat()}\x1f{end.isoformat() if end else ''}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def active(events: Iterable[Event], at: datetime) -> list[Event]:
    """The assertions that stand at system time ``at``, each cut at the first standing ending
    of its value after its start."""
    known = [e for e in events if e.known <= at]
    retired = {e.target for e in known if e.kind == "retire"}
    known = [e for e in known if e.id not in retired]
    reach: dict[str, Order] = {}
    for e in known:
        if e.kind == "retract" and (e.value not in reach or e.order > reach[e.value]):
            reach[e.value] = e.order
    standing = [e for e in known if not (e.value in reach and e.order < reach[e.value])]
    ends: dict[str, list[datetime]] = {}
    for e in standing:
        if e.kind == "end" and e.end is not None:
            ends.setdefault(e.value, []).append(e.end)
    return [_cut(a, ends.get(a.value, ())) for a in standing if a.kind == "assert"]


def _cut(a: Event, ends: Iterable[datetime]) -> Event:
    end = min((t for t in ends if _start(a.valid_at) < t), default=END_OF_TIME)
    return replace(a, end=end) if end < _end(a.end) else a


@dataclass
class _Run:
    """A stretch while it is drawn, its open ends as comparable extremes."""

    owner: str
    value: str
    start: datetime
    end: datetime


def stretches(assertions: Sequence[Event], single: bool) -> list[Stretch]:
    """The runs the standing assertions draw, in world-time order."""
    ordered = sorted(assertions, key=lambda a: (_start(a.valid_at), a.order))
    runs: list[_Run] = []
    if single:
        # At each start the last assertion in order wins, until its own end or the next start;
        # the run is owned by the first assertion of the winning value there, so restating a
        # value leaves the unit that already shows it in place.
        starts: dict[datetime, list[Event]] = {}
        for a in ordered:
            starts.setdefault(_start(a.valid_at), []).append(a)
        keys = sorted(starts)
        for i, start in enumerate(keys):
            winner = starts[start][-1]
            owner = next(a for a in starts[start] if a.value == winner.value)
            end = min(_end(winner.end), keys[i + 1] if i + 1 < len(keys) else END_OF_TIME)
            if end <= start:
                continue
            if runs and runs[-1].value == winner.value and runs[-1].end == start:
                runs[-1].end = end
            else:
                runs.append(_Run(owner.id, winner.value, start, end))
    else:
        for a in ordered:
            start, end = _start(a.valid_at), _end(a.end)
            if end <= start:
                continue
            if runs and runs[-1].value == a.value and runs[-1].end >= start:
                runs[-1].end = max(runs[-1].end, end)
            else:
                runs.append(_Run(a.id, a.value, start, end))
    owners = {a.id: a for a in ordered}
    return [Stretch(r.owner, r.value, owners[r.owner].valid_at, None if r.end == END_OF_TIME else r.end) for r in runs]


#: A stored unit of a group as ``shown`` reads it: id, owner (its assertion), valid_at, own end,
#: created_at, and its edges as (expired_at, invalid_at).
Drawn = tuple[str, str, "datetime | None", "datetime | None", datetime, Sequence[tuple[datetime, "datetime | None"]]]


def shown(units: Iterable[Drawn], at: datetime) -> list[Shown]:
    """Units of a group alive at system time ``at``; a unit's end is its own end or the earliest
    edge end known then."""
    alive = []
    for uid, owner, start, own_end, created, edges in units:
        if created > at:
            continue
        seen = [inv for exp, inv in edges if exp <= at]
        if any(inv is None for inv in seen):
            continue
        end = min([_end(own_end), *(inv for inv in seen if inv is not None)])
        if end > _start(start):
            alive.append(Shown(uid, owner, start, None if end == END_OF_TIME else end))
    return alive


def covers(unit: Shown, t: datetime) -> bool:
    """Whether a unit's stretch holds at world time ``t``."""
    return _start(unit.start) <= t < _end(unit.end)


def step(
    current: Sequence[Shown], desired: Sequence[Stretch], at: datetime, events: Sequence[Event]
) -> tuple[list[NewUnit], list[NewEdge]]:
    """The records that turn the units alive just before ``at`` into ``desired``, all at
    system time ``at``; ``events`` are the log entries of ``at`` (to name each edge's cause)."""
    by_owner = {(u.owner, u.start): u for u in current}
    units: list[NewUnit] = []
    edges: list[NewEdge] = []
    kept: set[str] = set()
    for d in desired:
        u = by_owner.get((d.owner, d.start))
        if u is None:
            units.append(NewUnit(unit_id(d.owner, at, d.end), d.owner, d.start, d.end, at))
            continue
        kept.add(u.id)
        if _end(d.end) < _end(u.end):
            edges.append(NewEdge(u.id, at, d.end, "ended", _cause(events, d.end)))
        elif _end(d.end) > _end(u.end):
            edges.append(NewEdge(u.id, at, None, "continued", _cause(events, None)))
            units.append(NewUnit(unit_id(d.owner, at, d.end), d.owner, d.start, d.end, at))
    for u in current:
        if u.id not in kept:
            edges.append(NewEdge(u.id, at, None, "withdrawn", _cause(events, None)))
    return units, edges


def _cause(events: Sequence[Event], begins: datetime | None) -> str:
    """The event of this system time behind an edge: the assertion that begins where a stretch
    now ends, else a retraction or retirement, else the first event."""
    if begins is not None:
        for e in events:
            if e.kind == "assert" and e.valid_at == begins:
                return e.id
    for e in events:
        if e.kind != "assert":
            return e.id
    return events[0].id


def apply(current: dict[str, Shown], units: Iterable[NewUnit], edges: Iterable[NewEdge]) -> None:
    """Advance the alive units (by id) past one ``step``'s records."""
    for e in edges:
        if e.invalid_at is None:
            current.pop(e.unit_id, None)
        elif e.unit_id in current:
            current[e.unit_id] = replace(current[e.unit_id], end=e.invalid_at)
    for u in units:
        current[u.id] = Shown(u.id, u.owner, u.start, u.end)


def replay(events: Sequence[Event], single: bool) -> tuple[list[NewUnit], list[NewEdge]]:
    """Every record a log yields, system time by system time, from nothing: as ``unit_id``
    follows (owner, system time, end), a replay of an unchanged log yields the records stored."""
    alive: dict[str, Shown] = {}
    all_units: list[NewUnit] = []
    all_edges: list[NewEdge] = []
    for at in sorted({e.known for e in events}):
        now = [e for e in events if e.known == at]
        units, edges = step(list(alive.values()), stretches(active(events, at), single), at, now)
        apply(alive, units, edges)
        all_units += units
        all_edges += edges
    return all_units, all_edges
