"""The window a question names: its phrases read (``graphmem.domain.timewords.phrases``), placed
against the anchor, modified ("the first week of"), joined into ranges, the most specific kept."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import ParamSpec, TypeVar

from graphmem.domain.timewords.periods import (
    HALVES,
    PARTS,
    QUARTERS,
    Period,
    Spec,
    calendar_unit,
    day_period,
    earliest,
    latest,
    place,
    shift,
    slice_of,
    this_one,
    week_period,
    years_period,
)
from graphmem.domain.timewords.phrases import Atom, read_atom
from graphmem.domain.timewords.vocabulary import (
    CONNECTORS,
    CUES,
    DASHES,
    GAP,
    NAMES_YEAR,
    PHRASE,
    PLAIN_CONNECTORS,
    TRIGGER,
    WEEKDAYS,
)
from graphmem.errors import InvalidInput

P = ParamSpec("P")
R = TypeVar("R")

_OPEN_START = datetime.min.replace(tzinfo=UTC)
_OPEN_END = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class TimeWindow:
    """A window of world time named in a question.

    Attributes:
        start: inclusive, timezone-aware UTC.
        end: exclusive, UTC; end > start.
        text: the phrase as written in the question, e.g. "on 19 March 2024".
        span: character offsets of that phrase in the question.
    """

    start: datetime
    end: datetime
    text: str
    span: tuple[int, int]

    def outside(self, question: str) -> str:
        """The question without the phrase (what recall searches for): "What did I cook on
        19 March 2024?" -> "What did I cook ?"; the whole question if nothing else is left."""
        return " ".join((question[: self.span[0]] + " " + question[self.span[1] :]).split()) or question


def find_window(question: str, anchor: datetime) -> TimeWindow | None:
    """The time window the question names, resolved against `anchor` (aware; the query's
    as-of point or now), or None when it names none.

    Raises:
        InvalidInput: the anchor is naive.
    """
    if anchor.tzinfo is None or anchor.utcoffset() is None:
        raise InvalidInput("the anchor of a time expression must be timezone-aware")
    if not TRIGGER.search(question):
        return None
    anchor = anchor.astimezone(UTC)
    atoms = [a for m in PHRASE.finditer(question) if (a := _guard(read_atom, m, question, anchor))]
    windows = [w for w in _windows(atoms, question, anchor) if w.end > w.start]
    # The most specific; on a tie, a phrase that names its year beats one that leans on the
    # anchor ("last Friday, on 23 January 2022"), then the first.
    return min(windows, key=lambda w: (w.end - w.start, not NAMES_YEAR.search(w.text), w.span[0]), default=None)


def _guard(resolve: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R | None:
    """What ``resolve`` gives, or None when the phrase names no time it can hold."""
    # Impossible dates ("31/02/2024", "the 1st century" as year 0) and phrases past datetime's
    # range ("9999 years ago") name nothing.
    try:
        return resolve(*args, **kwargs)
    except (ValueError, OverflowError):
        return None


def _windows(atoms: list[Atom], question: str, anchor: datetime) -> Iterator[TimeWindow]:
    """Each phrase's window; two adjacent phrases that make a range give one window."""
    i = 0
    while i < len(atoms):
        joined = _guard(_range, atoms[i], atoms[i + 1], question, anchor) if i + 1 < len(atoms) else None
        if joined is not None:
            yield joined
            i += 2
            continue
        alone = _guard(_standalone, atoms[i], question, anchor)
        if alone is not None:
            yield alone
        i += 1


def _strong(atom: Atom, question: str) -> bool:
    """Whether the phrase names a time on its own, without a range around it."""
    if not atom.weak:
        return True
    if question.startswith("'s", atom.end):  # "in April's room": a name
        return False
    if atom.weak in ("month", "season", "year") and atom.mod is not None:
        return True
    if atom.weak in CUES:
        return atom.cue in CUES[atom.weak]
    # "on the 19th" is a day; "on the 3rd floor", "at 3" and "the 1st one" are not.
    return atom.weak == "day" and atom.cue == "on" and re.match(r"\s*(?:$|[?.!,;:])", question[atom.end :]) is not None


def _base(atom: Atom, anchor: datetime) -> Period | None:
    """The period an atom names before its modifier, placed against the anchor."""
    if atom.period is not None:
        return atom.period
    if atom.weak == "weekend":
        this = week_period(anchor.date(), "weekend")
        return this if this.start <= anchor else week_period(anchor.date() - timedelta(weeks=1), "weekend")
    spec = atom.spec
    if spec is None:  # only a weekend has neither period nor spec
        return None
    if spec.year is not None:
        if spec.month is None and spec.day is None and spec.season is None:
            return years_period(spec.year)
        return place(spec, spec.year)
    if atom.rel == "last":
        return latest(spec, anchor, ended=True)
    if atom.rel == "next":
        return earliest(spec, anchor, strictly=True)
    if atom.rel == "this":
        return this_one(spec, anchor)
    return latest(spec, anchor)


def _modify(p: Period | None, mod: tuple[str, int] | None) -> Period | None:
    """The part of p, or the time next to p, that a modifier names."""
    if p is None or mod is None:
        return p
    kind, n = mod
    if kind.startswith("shift "):  # "two weeks before 11 August": the unit holding that moment
        unit = kind.removeprefix("shift ")
        return calendar_unit(unit, shift(p.start, unit, n), 0)
    if kind.startswith("next "):  # "the Monday before", "the week after" (n = -1 or 1)
        return _beside(p, kind.removeprefix("next "), n)
    if kind == "part":
        return slice_of(p, PARTS, n)
    if kind == "half":
        return slice_of(p, HALVES, n - 1 if n > 0 else n)
    if kind == "quarter":
        return slice_of(p, QUARTERS, n - 1 if n > 0 else n)
    if kind == "weekof":
        return week_period(p.start.date()) if p.grain == "day" else None
    if p.grain not in ("month", "season", "year"):
        return None
    # "the first week of April" counts from the 1st, "the first weekend" from the first Saturday
    length = timedelta(days={"day": 1, "weekend": 2, "week": 7}[kind])
    if kind == "weekend":
        first = p.start + timedelta(days=(5 - p.start.weekday()) % 7)
        last_day = (p.end - timedelta(days=1)).date()  # back to the period's last Saturday
        last = day_period(last_day - timedelta(days=(last_day.weekday() - 5) % 7)).start
    else:
        first, last = p.start, p.end - length
    start = last if n < 0 else first + (length if kind == "day" else timedelta(weeks=1)) * (n - 1)
    if start >= p.end:
        return None
    return Period(start, min(start + length, p.end) if kind == "week" else start + length, kind)


def _beside(p: Period, unit: str, direction: int) -> Period | None:
    """The unit just before (direction -1) or after (1) the period p."""
    if unit in WEEKDAYS:
        spec = Spec(weekday=WEEKDAYS[unit])
        return latest(spec, p.start, ended=True) if direction < 0 else earliest(spec, p.end)
    if unit == "weekend":
        if direction < 0:
            weekend = week_period(p.start.date(), unit)
            return weekend if weekend.end <= p.start else week_period(p.start.date() - timedelta(weeks=1), unit)
        weekend = week_period(p.end.date(), unit)
        return weekend if weekend.start >= p.end else week_period(p.end.date() + timedelta(weeks=1), unit)
    if direction < 0:
        return Period(shift(p.start, unit, -1), p.start, unit)
    return Period(p.end, shift(p.end, unit, 1), unit)


def _window(p: Period | None, start: int, end: int, question: str) -> TimeWindow | None:
    if p is None:
        return None
    return TimeWindow(p.start, p.end, question[start:end], (start, end))


def _standalone(atom: Atom, question: str, anchor: datetime) -> TimeWindow | None:
    if not _strong(atom, question):
        return None
    p = _modify(_base(atom, anchor), atom.mod)
    if p is None:
        return None
    if atom.cue == "since" and anchor > p.start:
        p = Period(p.start, anchor, "span")
    elif atom.cue == "before":
        p = Period(_OPEN_START, p.start, "span")
    elif atom.cue == "after":
        p = Period(p.end, _OPEN_END, "span")
    return _window(p, atom.start, atom.end, question)


def _range(a: Atom, b: Atom, question: str, anchor: datetime) -> TimeWindow | None:
    """One window from "between A and B", "from A to B", "A-B", "A to B" (A, B adjacent)."""
    gap = question[a.end : b.start]
    connector = GAP.fullmatch(gap)
    if connector is not None:
        word = connector.group(1).lower()
        if b.cue:
            return None
    elif not gap.strip() and b.cue in ("until", "till"):  # "from 3 May until 5 June"
        word = b.cue
    else:
        return None
    if word not in CONNECTORS.get(a.cue, PLAIN_CONNECTORS):
        return None
    if a.cue not in CONNECTORS and not (
        _strong(a, question) or _strong(b, question) or _years_dash(a, b, word, question)
    ):
        return None
    a_spec, b_spec = a.spec, b.spec
    # A bare day borrows its month (and year) from the other end: "20-25 April", "April 20-25".
    if a_spec is not None and a.weak in ("day", "number"):
        if b_spec is None or b_spec.month is None or b_spec.day is None:
            return None
        a_spec = Spec(month=b_spec.month, day=a_spec.day, year=a_spec.year)
    if b_spec is not None and b.weak in ("day", "number"):
        if a_spec is None or a_spec.month is None or a_spec.day is None:
            return None
        b_spec = Spec(month=a_spec.month, day=b_spec.day, year=b_spec.year or a_spec.year)
    a, b = replace(a, spec=a_spec), replace(b, spec=b_spec)
    if _is_placed(a) or not _is_placed(b):
        first = _base(a, anchor)
        # the second end, when it names no year, is the first such time after the first end
        if _is_placed(b) or first is None or b.spec is None:
            second = _base(b, anchor)
        else:
            second = earliest(b.spec, first.start)
    else:
        second = _base(b, anchor)
        first = latest(a.spec, second.start) if second is not None and a.spec is not None else None
    first, second = _modify(first, a.mod), _modify(second, b.mod)
    if first is None or second is None:
        return None
    return _window(Period(min(first.start, second.start), max(first.end, second.end), "span"), a.start, b.end, question)


def _years_dash(a: Atom, b: Atom, word: str, question: str) -> bool:
    """Whether two bare years joined by a dash name years ("2010-2014"), not a count
    ("2000-2500 points")."""
    if not (a.weak == b.weak == "year" and word in DASHES and a.spec and b.spec and a.spec.year and b.spec.year):
        return False
    return 1000 <= a.spec.year < b.spec.year < 2200 and not re.match(r"\s+[a-z]", question[b.end :])


def _is_placed(atom: Atom) -> bool:
    """Whether the atom names its year (or is relative): it needs no other end to be placed."""
    return atom.spec is None or atom.spec.year is not None or bool(atom.rel)
