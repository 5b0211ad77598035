"""Search entries: what the index filters on, derived from a unit and its invalidation edges.

A unit is visible at (world time T, system time S) when one of its entries has
``s_from <= S < s_to`` and ``t_from <= T < t_to``: the visibility rule of ``graphmem.ports.store``
as range predicates on one node, so a vector or fulltext index filters by scope and both time
axes inside the index. An entry opens when its unit is written and closes (``s_to``) when an
edge changes the unit's world interval; the next entry shows the shorter interval, or none when
the unit stopped being believed. Closed entries stay: a known-at query in the past finds what
was believed then.

Open ends are sentinel integers (index filters cannot test for null): times are microseconds
since the epoch, ``MIN`` and ``MAX`` stand for no start and no end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from graphmem.domain.models import AsOf

MIN = -(2**62)
MAX = 2**62
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(t: datetime | None, open_end: int) -> int:
    """A time as integer microseconds since the epoch; None as the given open end."""
    if t is None:
        return open_end
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def unit_text(content: str, summary: str | None) -> str:
    """What fulltext search reads of a unit."""
    return content if not summary else f"{content}\n{summary}"


def from_micros(value: int) -> datetime | None:
    """The time an entry property holds; None for an open end."""
    if value in (MIN, MAX):
        return None
    return _EPOCH + timedelta(microseconds=value)


class SpanProps(TypedDict):
    """A span as the integer properties an entry node carries (and its ``expired_at``)."""

    s_from: int
    s_to: int
    t_from: int
    t_to: int
    expired_at: datetime | None


@dataclass(frozen=True)
class Span:
    """One entry's intervals: system time [s_from, s_to), world time [t_from, t_to), and when
    the unit was first invalidated (None for its first entry)."""

    s_from: datetime
    s_to: datetime | None
    t_from: datetime | None
    t_to: datetime | None
    expired_at: datetime | None

    def props(self) -> SpanProps:
        """The span as the integer properties an entry node carries."""
        return {
            "s_from": micros(self.s_from, MIN),
            "s_to": micros(self.s_to, MAX),
            "t_from": micros(self.t_from, MIN),
            "t_to": micros(self.t_to, MAX),
            "expired_at": self.expired_at,
        }


def _empty(start: datetime | None, end: datetime | None) -> bool:
    return start is not None and end is not None and end <= start


def spans(
    created_at: datetime,
    valid_at: datetime | None,
    own_end: datetime | None,
    edges: Iterable[tuple[datetime, datetime | None]],
) -> list[Span]:
    """Every entry a unit has had, from its creation and its edges (expired_at, invalid_at):
    edges known at one system time change the interval once (an edge known before the unit
    counts from its creation); an edge without ``invalid_at`` ends the unit's entries."""
    by_time: dict[datetime, list[tuple[datetime, datetime | None]]] = {}
    for at, invalid in edges:
        by_time.setdefault(max(at, created_at), []).append((at, invalid))
    out: list[Span] = []
    start, end, expired = created_at, own_end, None
    if _empty(valid_at, end):
        return out
    for at in sorted(by_time):
        ends = [invalid for _, invalid in by_time[at]]
        first = min(raw for raw, _ in by_time[at])
        gone = any(i is None for i in ends)
        new_end = end if gone else min([e for e in (end, *ends) if e is not None])
        if not gone and new_end == end:
            continue
        if at > start:
            out.append(Span(start, at, valid_at, end, expired))
        start, end, expired = at, new_end, expired or first
        if gone or _empty(valid_at, end):
            return out
    out.append(Span(start, None, valid_at, end, expired))
    return out


def world_range(at: AsOf, during: tuple[datetime, datetime] | None) -> tuple[int, int]:
    """The world times a unit must be true at some point of, as [lo, hi) microseconds: the
    ``during`` interval, or the single point ``at.valid``."""
    if during is not None:
        return micros(during[0], MIN), micros(during[1], MAX)
    point = micros(at.valid, MIN)
    return point, point + 1


def window_margin(window: tuple[datetime, datetime]) -> int:
    """How far outside a time a question names its time list still looks: the window's own
    length, and at least three days (microseconds)."""
    return max(micros(window[1], MAX) - micros(window[0], MIN), 3 * 86_400_000_000)


def distance(value: int, window: tuple[int, int]) -> int:
    """How far a time (microseconds) lies outside a window [lo, hi): 0 inside it."""
    lo, hi = window
    return lo - value if value < lo else (value - hi + 1 if value >= hi else 0)


#: The kinds whose units are events: what they say happened when they start. Other units are
#: states, true over their whole interval.
EVENTS = ("episodic",)
#: Every kind's name, in the order the index compares strings.
KINDS = ("episodic", "procedural", "semantic")


def kind_ranges(kinds: Iterable[str]) -> list[list[str]]:
    """``kinds`` (every kind when empty) as the fewest ``[lo, hi]`` name ranges that hold them
    and no other kind: Neo4j's vector index filters by ranges, not lists (no ``IN`` before
    2026.06), and each range costs one index call."""
    asked = set(kinds) or set(KINDS)
    out: list[list[str]] = []
    for i, kind in enumerate(KINDS):
        if kind not in asked:
            continue
        if out and out[-1][1] == KINDS[i - 1]:
            out[-1][1] = kind
        else:
            out.append([kind, kind])
    return out


class NearProps(TypedDict):
    """A ``Near`` rule as the recall statement's parameters."""

    kinds: list[str]
    ranges: list[list[str]]
    event: bool
    from_lo: int
    from_hi: int
    to_lo: int


@dataclass(frozen=True)
class Near:
    """Which entries of some kinds are near a time a question names (the time list), as range
    predicates an index can filter by: ``from_lo <= t_from < from_hi`` and ``t_to > to_lo``.
    An event is near when it starts within the window's margin, a state when its interval
    meets it; both within the request's own world range."""

    kinds: tuple[str, ...]
    event: bool
    from_lo: int
    from_hi: int
    to_lo: int

    def props(self) -> NearProps:
        return {
            "kinds": list(self.kinds),
            "ranges": kind_ranges(self.kinds),
            "event": self.event,
            "from_lo": self.from_lo,
            "from_hi": self.from_hi,
            "to_lo": self.to_lo,
        }

    def is_world(self, world: tuple[int, int]) -> bool:
        """Whether the rule asks for no more than the request's own world range ``[lo, hi)``
        (a state rule whenever the asked point or interval lies within the window's margin)."""
        return self.from_lo == MIN and self.from_hi == world[1] and self.to_lo == world[0]


def vector_calls(
    kinds: Iterable[str], world: tuple[int, int], rules: Iterable[Near]
) -> tuple[list[list[str | bool | None]], list[Near]]:
    """The semantic list's index calls as ``[lo, hi, event]`` kind ranges, and the time-list
    rules that still need calls of their own. A rule asking for just the world range
    (``Near.is_world``) would search the semantic list's entries again: its candidates are
    read from the semantic calls for its kinds instead (``event``: that rule's flag on those
    ranges, None on the others), one index call fewer."""
    rules = list(rules)
    shared = [r for r in rules if r.is_world(world)]
    rest = [k for k in (list(kinds) or KINDS) if not any(k in r.kinds for r in shared)]
    calls: list[list[str | bool | None]] = [[lo, hi, None] for lo, hi in (kind_ranges(rest) if rest else [])]
    calls += [[lo, hi, r.event] for r in shared for lo, hi in kind_ranges(r.kinds)]
    return calls, [r for r in rules if r not in shared]


def near(window: tuple[datetime, datetime], world: tuple[int, int], kinds: Iterable[str]) -> list[Near]:
    """The time list's predicates for the requested kinds (all kinds: ``kinds`` empty)."""
    lo, hi = micros(window[0], MIN), micros(window[1], MAX)
    margin = window_margin(window)
    asked = list(kinds) or list(KINDS)
    events = tuple(k for k in asked if k in EVENTS)
    states = tuple(k for k in asked if k not in EVENTS)
    out = []
    if events:
        out.append(Near(events, True, lo - margin, min(hi + margin, world[1]), world[0]))
    if states:
        out.append(Near(states, False, MIN, min(hi + margin, world[1]), max(lo - margin, world[0])))
    return out


def nearness(t_from: int, t_to: int, window: tuple[datetime, datetime], event: bool, began_first: bool = False) -> int:
    """How far an entry lies from a window (microseconds; 0: in it): an event by its start,
    a state by the gap between its interval and the window. ``began_first`` (a question about
    what happened then): a state that began before the window and holds into it lies as far as
    it began before, so what began inside the asked time comes first."""
    w = (micros(window[0], MIN), micros(window[1], MAX))
    if event:
        return distance(t_from, w)
    if t_to <= w[0]:
        return w[0] - t_to + 1
    return t_from - w[1] + 1 if t_from >= w[1] else (max(0, w[0] - t_from) if began_first else 0)
