"""Periods of the calendar: days, weeks, months, seasons and years as [start, end) in UTC, and
where a day, month, season or weekday named without its year falls next to a given time."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta


@dataclass(frozen=True)
class Period:
    start: datetime
    end: datetime
    grain: str  # hour day week weekend month season year decade century span


def add_months(year: int, month: int, n: int) -> tuple[int, int]:
    y, m = divmod(year * 12 + month - 1 + n, 12)
    return y, m + 1


def day_period(d: date) -> Period:
    start = datetime(d.year, d.month, d.day, tzinfo=UTC)
    return Period(start, start + timedelta(days=1), "day")


def month_period(year: int, month: int) -> Period:
    return Period(datetime(year, month, 1, tzinfo=UTC), datetime(*add_months(year, month, 1), 1, tzinfo=UTC), "month")


def years_period(year: int, n: int = 1, grain: str = "year") -> Period:
    return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + n, 1, 1, tzinfo=UTC), grain)


def season_period(year: int, first_month: int) -> Period:
    end = datetime(*add_months(year, first_month, 3), 1, tzinfo=UTC)
    return Period(datetime(year, first_month, 1, tzinfo=UTC), end, "season")


def week_period(d: date, grain: str = "week") -> Period:
    monday = day_period(d - timedelta(days=d.weekday())).start
    if grain == "weekend":
        return Period(monday + timedelta(days=5), monday + timedelta(days=7), grain)
    return Period(monday, monday + timedelta(days=7), grain)


def hours_period(day: date, first: int, last: int) -> Period:
    start = day_period(day).start
    return Period(start + timedelta(hours=first), start + timedelta(hours=last), "hour")


def shift(at: datetime, unit: str, n: int) -> datetime:
    """`at` moved n calendar units; a day past the end of the target month is clamped to it."""
    if unit in ("hour", "day", "week"):
        return at + timedelta(**{unit + "s": n})
    months = n * {"month": 1, "year": 12, "decade": 120}[unit]
    y, m = add_months(at.year, at.month, months)
    return at.replace(year=y, month=m, day=min(at.day, calendar.monthrange(y, m)[1]))


def calendar_unit(unit: str, anchor: datetime, n: int) -> Period:
    """The calendar unit (hour, day, week, weekend, month, year) n units from the anchor's."""
    if unit == "hour":
        start = anchor.replace(minute=0, second=0, microsecond=0) + timedelta(hours=n)
        return Period(start, start + timedelta(hours=1), "hour")
    if unit == "day":
        return day_period(anchor.date() + timedelta(days=n))
    if unit in ("week", "weekend"):
        return week_period(anchor.date() + timedelta(weeks=n), unit)
    if unit == "month":
        return month_period(*add_months(anchor.year, anchor.month, n))
    return years_period(anchor.year + n)


#: A period's sub-periods by its grain: the unit they count in and their edges, as offsets in
#: that unit from its start (None: its end).
SubPeriods = dict[str, tuple[str, tuple[int | None, ...]]]

# Parts are thirds.
PARTS: SubPeriods = {
    "year": ("month", (0, 4, 8, 12)),
    "season": ("month", (0, 1, 2, 3)),
    "month": ("day", (0, 10, 20, None)),
    "week": ("day", (0, 2, 4, 7)),
    "decade": ("year", (0, 4, 7, 10)),
    "century": ("year", (0, 34, 67, 100)),
}
HALVES: SubPeriods = {"year": ("month", (0, 6, 12)), "month": ("day", (0, 15, None))}
QUARTERS: SubPeriods = {"year": ("month", (0, 3, 6, 9, 12))}


def slice_of(p: Period, table: SubPeriods, index: int) -> Period | None:
    """The ``index``-th sub-period of ``p`` (from the end when negative), by ``table``."""
    if p.grain not in table:
        return None
    unit, edges = table[p.grain]
    index = index if index >= 0 else len(edges) - 1 + index

    def at(offset: int | None) -> datetime:
        return p.end if offset is None else shift(p.start, unit, offset)

    return Period(at(edges[index]), at(edges[index + 1]), "span")


@dataclass(frozen=True)
class Spec:
    """A day, month, season or weekday not yet placed in time."""

    month: int | None = None  # a day with month None is a day of an unnamed month ("the 19th")
    day: int | None = None
    season: int | None = None
    weekday: int | None = None
    year: int | None = None


def place(spec: Spec, year: int, month: int | None = None) -> Period | None:
    if spec.season is not None:
        return season_period(year, spec.season)
    month = spec.month or month
    if month is None:  # a day of no month: every caller gives one
        return None
    if spec.day is None:
        return month_period(year, month)
    if spec.day > calendar.monthrange(year, month)[1]:
        return None
    return day_period(date(year, month, spec.day))


def _occurrences(spec: Spec, ref: datetime) -> list[Period]:
    """The spec's occurrences around `ref`, in time order (enough for every search below)."""
    if spec.weekday is not None:
        first = ref.date() - timedelta(days=14)
        first += timedelta(days=(spec.weekday - first.weekday()) % 7)
        return [day_period(first + timedelta(weeks=k)) for k in range(5)]
    if spec.month is None and spec.season is None:
        months = (add_months(ref.year, ref.month, k) for k in range(-13, 14))
        found = (place(spec, y, m) for y, m in months)
    else:  # 9 years either side: 29 February recurs within 8
        found = (place(spec, y) for y in range(ref.year - 9, ref.year + 10))
    return [p for p in found if p is not None]


def latest(spec: Spec, ref: datetime, ended: bool = False) -> Period | None:
    """The last occurrence that started (or with `ended`, that ended) at or before `ref`."""
    return max(
        (p for p in _occurrences(spec, ref) if (p.end if ended else p.start) <= ref),
        key=lambda p: p.start,
        default=None,
    )


def earliest(spec: Spec, ref: datetime, strictly: bool = False) -> Period | None:
    """The first occurrence that starts at (unless `strictly`) or after `ref`."""
    return min(
        (p for p in _occurrences(spec, ref) if p.start > ref or (p.start == ref and not strictly)),
        key=lambda p: p.start,
        default=None,
    )


def this_one(spec: Spec, anchor: datetime) -> Period | None:
    if spec.weekday is not None:
        return day_period(week_period(anchor.date()).start.date() + timedelta(days=spec.weekday))
    return min(_occurrences(spec, anchor), key=lambda p: (max(p.start - anchor, anchor - p.end, timedelta(0)), p.start))
