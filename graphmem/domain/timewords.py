"""Time words in questions: the window of world time a question names, if it names one.

    >>> from datetime import datetime, timezone
    >>> w = find_window("What did I cook on 19 March 2024?", datetime(2024, 5, 1, tzinfo=timezone.utc))
    >>> w.start.date().isoformat(), w.end.date().isoformat(), w.text
    ('2024-03-19', '2024-03-20', 'on 19 March 2024')

Pure and fast: one regular expression finds the candidate phrases, small functions resolve them
against the anchor. Maintained parsers were measured and not used: dateparser and ctparse return
points rather than windows, miss weeks, seasons, parts and ranges, take "I may go" or "Sunday
best" for dates, and cost 0.2-20 ms a question.

Conventions (every window is [start, end) in UTC; the anchor is the query's as-of point or now):

- A day, month or season named without a year is its most recent occurrence that started at or
  before the anchor ("in March" asked in March is this March). "last X" is the most recent one
  that has ended; "next X" the first that starts after the anchor; "this <weekday>" that day of
  the anchor's week; "this <month|season>" the one containing the anchor, else the nearest.
- Numeric dates are day-first ("03/04/2024" is 3 April) unless the second number is over 12
  ("04/19/2024" is 19 April). "YYYY-NN" is a range of years when NN is later ("2019-21"), else
  an ISO month ("2024-03").
- Weeks run Monday to Sunday; weekends Saturday and Sunday. "the first week of April" is 1-7
  April, "the last week of April" its last seven days, "the first weekend of April" the one
  of its first Saturday, "the last day of April" the 30th; "the week of 3 April" is the
  Monday to Sunday week containing it.
- Seasons are meteorological, northern hemisphere: spring March-May, summer June-August,
  autumn (fall) September-November, winter December-February. "winter 2023" (and "winter
  2023/24") is the winter that begins in December 2023.
- Parts: early / beginning / start = the first third, mid / middle = the middle third, late /
  end = the last third (of a month: days 1-10, 11-20, 21-end; of a year: Jan-Apr, May-Aug,
  Sep-Dec; of a decade: years 0-3, 4-6, 7-9). Halves of a year or month, quarters of a year.
- Relative words count whole calendar units: "last week" / "a week ago" is the previous
  Monday-Sunday week, "two years ago" the whole calendar year, "3 days ago" that day. "the
  past week", "the last 3 months" are rolling: from that long before the anchor up to it.
  "this morning" is 00-12 h, afternoon 12-18 h, evening 18-24 h; "last night" 18 h yesterday
  to 06 h today.
- Next to a date: "the Monday before 24 July" is the last Monday that ended by then, "the week
  after 3 May" the seven days after it, "two weeks before 11 August" the Monday-Sunday week
  holding 28 July.
- "the 1990s" and "the 90s" are decades; "the 1800s" and "the 19th century" are 1800-1899.
- "since X" runs from X to the anchor; "before X" and "after X" are open-ended (datetime.min
  or datetime.max, in UTC).
- Years are 1000-2999. A bare number is a year after a cue ("in 2019", "the class of 2019") or
  before a name ("the 2018 World Cup"), not before a noun ("2000 people").
- Vague words name no window: recently, lately, these days, the other day, a few days ago, a
  while ago, now. Neither do times of day alone ("at 3"), habits ("on Sundays"), ages ("in her
  20s") or words that only look like dates ("I may go", "march on", "the 1st one").
- Not understood (no window, or a wider one): holidays ("Christmas"), "the month" or "the year"
  with no other word, years before 1000, quarters without a year ("Q1").

When several phrases name times, the most specific (shortest) window wins; on a tie, one that
names its year beats one resolved from the anchor, then the first. "between X and Y" and "from
X to Y" give one window covering both ends.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from graphmem.errors import InvalidInput

__all__ = ["TimeWindow", "find_window"]

UTC = UTC
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
    if not _TRIGGER.search(question):
        return None
    anchor = anchor.astimezone(UTC)
    atoms = [a for m in _PHRASE.finditer(question) if (a := _guard(_atom, m, question, anchor))]
    windows = [w for w in _windows(atoms, question, anchor) if w.end > w.start]
    # The most specific; on a tie, a phrase that names its year beats one that leans on the
    # anchor ("last Friday, on 23 January 2022"), then the first.
    return min(windows, key=lambda w: (w.end - w.start, not _NAMES_YEAR.search(w.text), w.span[0]), default=None)


# --- vocabulary -------------------------------------------------------------------------------

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
}  # fmt: skip
_MONTH_ABBR = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
               "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}  # fmt: skip
_WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_WEEKDAY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
                 "fri": 4, "sat": 5, "sun": 6}  # fmt: skip
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
_DECADE_WORDS = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
                 "seventies": 70, "eighties": 80, "nineties": 90}  # fmt: skip
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4, "fifth": 5, "5th": 5, "last": -1, "final": -1, "latter": -1}  # fmt: skip

# Cues that make a bare month, season or year a time ("in May", not "I may"); weekdays and
# weekends take their own ("on Monday", "over the weekend"), since "on May" or "in Monday" are
# not how people name them.
_PERIOD_CUES = {"in", "during", "throughout", "since", "before", "after", "until", "till",
                "around", "circa", "as of", "back in", "sometime in"}  # fmt: skip
_CUES = {
    "month": _PERIOD_CUES,
    "season": _PERIOD_CUES,
    "year": _PERIOD_CUES | {"by", "from"},  # not for months: "a painting by June"
    "weekday": {"on", "since", "before", "after", "until", "till", "by"},
    "weekend": {"on", "over", "at", "during", "in", "since", "before", "after"},
}


def _words(*tables: dict) -> str:
    # Longest first, so "march" is tried before "mar" and "thurs" before "thu".
    return "|".join(sorted((w for t in tables for w in t), key=len, reverse=True))


_MONTH = rf"(?:(?:{_words(_MONTHS)})(?!\w)|(?:{_words(_MONTH_ABBR)})(?:\.|(?!\w)))"
_WEEKDAY = rf"(?:{_words(_WEEKDAYS)})(?!\w)"
_ANY_WEEKDAY = rf"(?:{_words(_WEEKDAYS, _WEEKDAY_ABBR)})\.?"
_SEASON = rf"(?:{_words(_SEASONS)})(?:time)?(?!\w)"
# A digit may follow "-" (the end of "20-25 April") but not ".", ":" or "/" ("3.5", "10:30").
_DAY = r"(?<![\w.:/$£€])(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\w)"
_YEAR = r"(?<![\w.:/$£€])[12]\d{3}(?!\w)"
_NUM = rf"(?:\d{{1,4}}|a\s+couple\s+of|{_words(_NUMBERS)})"
_UNIT = r"(?:hour|day|week|month|year)s?(?!\w)"

_CUE = (
    r"(?P<cue>as\s+of|back\s+in|sometime\s+in|in|on|during|throughout|since|before|after|until|till|around|circa"
    r"|between|from|at|by|over)\s+"
)
_MOD = (
    r"(?:(?:the\s+)?(?:very\s+)?(?P<part>early|mid|late)(?:\s*-\s*|\s+)"
    r"|(?:the\s+)?(?:very\s+)?(?P<partof>beginning|start|middle|end)\s+of\s+"
    r"|(?:the\s+)?(?P<nth>first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last|final)\s+(?P<nth_unit>day|week(?:end)?)\s+(?:of|in)\s+"
    r"|(?:the\s+)?(?P<half>first|second|1st|2nd|last|latter)\s+half\s+of\s+"
    r"|(?:the\s+)?(?P<quarter>first|second|third|fourth|1st|2nd|3rd|4th|last)\s+quarter\s+of\s+"
    r"|(?P<qnum>q[1-4])\s+"
    r"|(?P<weekof>the\s+week\s+of)\s+"
    rf"|(?:the\s+)?(?:(?P<off_n>{_NUM})\s+(?P<off_u>{_UNIT})|(?P<off_w>{_WEEKDAY}|weekend|week|day|month|year))\s+(?P<off_dir>before|after)\s+)"
)
_ATOMS = "|".join(
    (
        # before the years, so that "1000 days ago" is not the year 1000
        rf"(?P<ago_n>{_NUM})\s+(?P<ago_u>{_UNIT})\s+(?:ago|back)(?!\w)",
        rf"(?P<iso_y>{_YEAR})(?P<iso_sep>[-/.])(?P<iso_m>1[0-2]|0?[1-9])(?P=iso_sep)(?P<iso_d>3[01]|[12]\d|0?[1-9])(?!\w|[-/.]\d)",
        r"(?<![\w.:/-])(?P<num_a>\d{1,2})(?P<num_sep>[-/.])(?P<num_b>\d{1,2})(?P=num_sep)(?P<num_y>\d{4}|\d{2})(?!\w|[-/.]\d)",
        rf"(?:{_ANY_WEEKDAY},?\s+)?(?:the\s+)?(?P<dmy_d>{_DAY})(?:\s+of)?\s+(?P<dmy_m>{_MONTH})(?:(?:,\s*|\s+)(?P<dmy_y>{_YEAR}))?",
        rf"(?:{_ANY_WEEKDAY},?\s+)?(?P<mdy_m>{_MONTH})\s+(?:the\s+)?(?P<mdy_d>{_DAY})(?:(?:,\s*|\s+)(?P<mdy_y>{_YEAR}))?",
        rf"(?P<my_m>{_MONTH})(?:,?\s+|\s+of\s+)(?P<my_y>{_YEAR})",
        rf"(?:the\s+)?(?P<sy_s>{_SEASON})(?:\s+of)?,?\s+(?P<sy_y>{_YEAR})(?:\s*[-/–]\s*(?P<sy_y2>\d{{4}}|\d{{2}})(?!\w))?",
        r"(?:the\s+)?(?P<cent>2[01]|1\d|[1-9])(?:st|nd|rd|th)[\s-]+century(?!\w)",
        rf"(?:the\s+)?(?:(?P<dec4>[12]\d\d0)|'?(?P<dec2>\d0))'?s(?!\w)|(?:the\s+)?(?P<decw>{_words(_DECADE_WORDS)})(?!\w)",
        rf"the\s+year\s+(?P<theyear>{_YEAR})",
        rf"(?P<yr>{_YEAR})(?:\s*[-–/]\s*(?P<yr2>\d{{2}})(?!\w|[-/.]\d))?",
        r"(?:the\s+)?day\s+(?P<dayrel>before\s+yesterday|after\s+tomorrow)(?!\w)",
        r"(?:the\s+)?(?P<beforelast>weekend|week|month|year)\s+before\s+last(?!\w)",
        r"(?P<lastnight>last\s+night)(?!\w)",
        r"(?P<dayword>yesterday|today|tonight|tomorrow)(?:\s+(?P<daypart>morning|afternoon|evening|night)(?!\w))?(?!\w)",
        r"this\s+(?P<thispart>morning|afternoon|evening)(?!\w)",
        r"(?P<edge>earlier|later)\s+(?:(?P<edgeday>today)|this\s+(?P<edgeunit>week|month|year))(?!\w)",
        rf"(?:the\s+)?(?:past|last|previous)\s+(?P<roll_n>{_NUM})\s+(?P<roll_u>{_UNIT})",
        r"the\s+(?:past|last)\s+(?P<roll1>week|month|year|decade)(?!\w)(?!\s+of\b)",
        (
            rf"(?:the\s+)?(?P<rel>this\s+past|last|this|next|previous|coming)\s+"
            rf"(?P<rel_t>weekend|week|month|year|{_MONTH}|{_SEASON}|{_WEEKDAY})(?!\w)"
        ),
        r"(?:the\s+)?(?P<weekend>weekend)(?!\w)",
        rf"(?P<bare_m>{_MONTH})",
        rf"(?:the\s+)?(?P<bare_s>{_SEASON})",
        rf"(?P<bare_w>{_WEEKDAY})",
        rf"(?P<bare_d_the>the\s+)?(?P<bare_d>{_DAY})(?:,\s*(?P<bare_d_y>{_YEAR}))?",
    )
)
_PHRASE = re.compile(rf"(?<!\w)(?:{_CUE})?(?:{_MOD})?(?:{_ATOMS})", re.IGNORECASE)
# Most questions name no time: one cheap search turns them away before the phrase scan.
_TRIGGER = re.compile(
    rf"\d|\b(?:{_words(_MONTHS, _MONTH_ABBR, _WEEKDAYS, _SEASONS, _DECADE_WORDS)}|yesterday|today"
    r"|tonight|tomorrow|week|month|year|decade|ago|night|morning|afternoon|evening)",
    re.IGNORECASE,
)
_DASHES = {"-", "–", "—"}
_PLAIN_CONNECTORS = {"to", "until", "till", "through", "thru"} | _DASHES
_CONNECTORS = {"between": {"and"}, "from": _PLAIN_CONNECTORS}  # what each opening word takes
_NAMES_YEAR = re.compile(r"\d{4}")
# Month and season words that begin names of events: "the next winter Olympics", "March Madness"
_NAMED_AFTER = re.compile(r"\s+(?:olympics?|paralympics|games|madness)\b", re.IGNORECASE)
_GAP = re.compile(r"\s*(and|to|until|till|through|thru|-|–|—)\s*", re.IGNORECASE)


# --- periods ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Period:
    start: datetime
    end: datetime
    grain: str  # hour day week weekend month season year decade century span


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    y, m = divmod(year * 12 + month - 1 + n, 12)
    return y, m + 1


def _day(d: date) -> _Period:
    start = datetime(d.year, d.month, d.day, tzinfo=UTC)
    return _Period(start, start + timedelta(days=1), "day")


def _month(year: int, month: int) -> _Period:
    return _Period(datetime(year, month, 1, tzinfo=UTC), datetime(*_add_months(year, month, 1), 1, tzinfo=UTC), "month")


def _years(year: int, n: int = 1, grain: str = "year") -> _Period:
    return _Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + n, 1, 1, tzinfo=UTC), grain)


def _season(year: int, first_month: int) -> _Period:
    end = datetime(*_add_months(year, first_month, 3), 1, tzinfo=UTC)
    return _Period(datetime(year, first_month, 1, tzinfo=UTC), end, "season")


def _week(d: date, grain: str = "week") -> _Period:
    monday = _day(d - timedelta(days=d.weekday())).start
    if grain == "weekend":
        return _Period(monday + timedelta(days=5), monday + timedelta(days=7), grain)
    return _Period(monday, monday + timedelta(days=7), grain)


def _hours(day: date, first: int, last: int) -> _Period:
    start = _day(day).start
    return _Period(start + timedelta(hours=first), start + timedelta(hours=last), "hour")


def _shift(at: datetime, unit: str, n: int) -> datetime:
    """`at` moved n calendar units; a day past the end of the target month is clamped to it."""
    if unit in ("hour", "day", "week"):
        return at + timedelta(**{unit + "s": n})
    months = n * {"month": 1, "year": 12, "decade": 120}[unit]
    y, m = _add_months(at.year, at.month, months)
    return at.replace(year=y, month=m, day=min(at.day, calendar.monthrange(y, m)[1]))


def _calendar_unit(unit: str, anchor: datetime, n: int) -> _Period:
    """The calendar unit (hour, day, week, weekend, month, year) n units from the anchor's."""
    if unit == "hour":
        start = anchor.replace(minute=0, second=0, microsecond=0) + timedelta(hours=n)
        return _Period(start, start + timedelta(hours=1), "hour")
    if unit == "day":
        return _day(anchor.date() + timedelta(days=n))
    if unit in ("week", "weekend"):
        return _week(anchor.date() + timedelta(weeks=n), unit)
    if unit == "month":
        return _month(*_add_months(anchor.year, anchor.month, n))
    return _years(anchor.year + n)


# Sub-periods, as offsets in a unit from the start (None = the period's end): parts are thirds.
_PARTS = {
    "year": ("month", (0, 4, 8, 12)),
    "season": ("month", (0, 1, 2, 3)),
    "month": ("day", (0, 10, 20, None)),
    "week": ("day", (0, 2, 4, 7)),
    "decade": ("year", (0, 4, 7, 10)),
    "century": ("year", (0, 34, 67, 100)),
}
_HALVES = {"year": ("month", (0, 6, 12)), "month": ("day", (0, 15, None))}
_QUARTERS = {"year": ("month", (0, 3, 6, 9, 12))}
_PART_INDEX = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}


def _slice(p: _Period, table: dict, index: int) -> _Period | None:
    if p.grain not in table:
        return None
    unit, edges = table[p.grain]
    index = index if index >= 0 else len(edges) - 1 + index

    def at(offset: int | None) -> datetime:
        return p.end if offset is None else _shift(p.start, unit, offset)

    return _Period(at(edges[index]), at(edges[index + 1]), "span")


@dataclass(frozen=True)
class _Spec:
    """A day, month, season or weekday not yet placed in time."""

    month: int | None = None  # a day with month None is a day of an unnamed month ("the 19th")
    day: int | None = None
    season: int | None = None
    weekday: int | None = None
    year: int | None = None


def _place(spec: _Spec, year: int, month: int | None = None) -> _Period | None:
    if spec.season is not None:
        return _season(year, spec.season)
    month = spec.month or month
    if spec.day is None:
        return _month(year, month)
    if spec.day > calendar.monthrange(year, month)[1]:
        return None
    return _day(date(year, month, spec.day))


def _occurrences(spec: _Spec, ref: datetime) -> list[_Period]:
    """The spec's occurrences around `ref`, in time order (enough for every search below)."""
    if spec.weekday is not None:
        first = ref.date() - timedelta(days=14)
        first += timedelta(days=(spec.weekday - first.weekday()) % 7)
        return [_day(first + timedelta(weeks=k)) for k in range(5)]
    if spec.month is None and spec.season is None:
        months = (_add_months(ref.year, ref.month, k) for k in range(-13, 14))
        found = (_place(spec, y, m) for y, m in months)
    else:  # 9 years either side: 29 February recurs within 8
        found = (_place(spec, y) for y in range(ref.year - 9, ref.year + 10))
    return [p for p in found if p is not None]


def _latest(spec: _Spec, ref: datetime, ended: bool = False) -> _Period | None:
    """The last occurrence that started (or with `ended`, that ended) at or before `ref`."""
    return max(
        (p for p in _occurrences(spec, ref) if (p.end if ended else p.start) <= ref),
        key=lambda p: p.start,
        default=None,
    )


def _earliest(spec: _Spec, ref: datetime, strictly: bool = False) -> _Period | None:
    """The first occurrence that starts at (unless `strictly`) or after `ref`."""
    return min(
        (p for p in _occurrences(spec, ref) if p.start > ref or (p.start == ref and not strictly)),
        key=lambda p: p.start,
        default=None,
    )


def _this(spec: _Spec, anchor: datetime) -> _Period | None:
    if spec.weekday is not None:
        return _day(_week(anchor.date()).start.date() + timedelta(days=spec.weekday))
    return min(_occurrences(spec, anchor), key=lambda p: (max(p.start - anchor, anchor - p.end, timedelta(0)), p.start))


# --- phrases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Atom:
    """One phrase found in the question: either a resolved period or a spec to place."""

    start: int  # the phrase, cue and modifier included
    end: int
    cue: str
    mod: tuple[str, int] | None  # (kind, number): see _modify
    period: _Period | None = None
    spec: _Spec | None = None
    rel: str = ""  # last | this | next, for a spec
    # what the phrase is when it may not be a time on its own (see _strong): month, season,
    # year, weekday, weekend, day ("the 19th") or number ("20")
    weak: str = ""


def _int(text: str) -> int:
    return int(re.match(r"\d+", text).group())


def _month_of(text: str) -> int:
    word = text.lower().rstrip(".")
    return _MONTHS.get(word) or _MONTH_ABBR[word]


def _number(text: str) -> int:
    text = text.lower()
    if text[0].isdigit():
        return int(text)
    return 2 if "couple" in text else _NUMBERS[text]


def _two_digit_year(yy: int, anchor: datetime) -> int:
    """A two-digit year: "24" is 2024, unless that is over ten years after the anchor ("99": 1999)."""
    return 2000 + yy if 2000 + yy <= anchor.year + 10 else 1900 + yy


def _modifier(g: dict) -> tuple[str, int] | None:
    if "part" in g or "partof" in g:
        return ("part", _PART_INDEX[(g.get("part") or g["partof"]).lower()])
    if "nth" in g:
        return (g["nth_unit"].lower(), _ORDINALS[g["nth"].lower()])
    if "half" in g:
        return ("half", _ORDINALS[g["half"].lower()])
    if "quarter" in g or "qnum" in g:
        return ("quarter", _ORDINALS[g["quarter"].lower()] if "quarter" in g else int(g["qnum"][1]))
    if "weekof" in g:
        return ("weekof", 0)
    if "off_dir" in g:
        sign = -1 if g["off_dir"].lower() == "before" else 1
        if "off_n" in g:
            return ("shift " + g["off_u"].lower().rstrip("s"), sign * _number(g["off_n"]))
        return ("next " + g["off_w"].lower(), sign)
    return None


def _atom(m: re.Match, question: str, anchor: datetime) -> _Atom | None:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if ("bare_m" in g or "bare_s" in g or "rel_t" in g) and _NAMED_AFTER.match(question, m.end()):
        return None
    cue = " ".join(g.get("cue", "").lower().split())
    base: dict[str, Any] = {"start": m.start(), "end": m.end(), "cue": cue, "mod": _modifier(g)}

    if "iso_y" in g:
        spec = _Spec(month=int(g["iso_m"]), day=int(g["iso_d"]), year=int(g["iso_y"]))
        return _Atom(**base, spec=spec)
    if "num_a" in g:
        a, b, y = int(g["num_a"]), int(g["num_b"]), int(g["num_y"])
        day, month = (b, a) if b > 12 else (a, b)
        year = y if len(g["num_y"]) == 4 else _two_digit_year(y, anchor)
        return _Atom(**base, spec=_Spec(month=month, day=day, year=year))
    for key in ("dmy", "mdy"):
        if key + "_m" in g:
            year = _int(g[key + "_y"]) if key + "_y" in g else None
            spec = _Spec(month=_month_of(g[key + "_m"]), day=_int(g[key + "_d"]), year=year)
            return _Atom(**base, spec=spec)
    if "my_m" in g:
        return _Atom(**base, spec=_Spec(month=_month_of(g["my_m"]), year=int(g["my_y"])))
    if "sy_s" in g:
        return _season_year(g, base)
    if "cent" in g:
        return _Atom(**base, period=_years((int(g["cent"]) - 1) * 100, 100, "century"))
    if "dec4" in g:
        first = int(g["dec4"])
        if first % 100 == 0 and first != 2000:  # "the 1800s" is the century
            return _Atom(**base, period=_years(first, 100, "century"))
        return _Atom(**base, period=_years(first, 10, "decade"))
    if "dec2" in g or "decw" in g:
        if not re.search(r"\bthe\b|'", m.group(), re.IGNORECASE):  # "in her 20s" is an age
            return None
        tens = int(g["dec2"]) if "dec2" in g else _DECADE_WORDS[g["decw"].lower()]
        century = anchor.year // 100 * 100  # the latest such decade begun: "the 90s" in 2024 is 1990
        first = century + tens if century + tens <= anchor.year else century - 100 + tens
        return _Atom(**base, period=_years(first, 10, "decade"))
    if "theyear" in g:
        return _Atom(**base, period=_years(int(g["theyear"])))
    if "yr" in g:
        return _year_atom(g, base, question, m)
    period = _relative(g, anchor)
    if period is not None:
        return _Atom(**base, period=period)
    if "rel" in g:
        return _rel_atom(g, base, anchor)
    if "weekend" in g:
        return _Atom(**base, spec=None, weak="weekend")
    if "bare_m" in g:
        return _Atom(**base, spec=_Spec(month=_month_of(g["bare_m"])), weak="month")
    if "bare_s" in g:
        after = question[m.end() :]
        # "the fall of Rome", "the Winter Olympics"
        if re.match(r"\s+of\b", after) or (g["bare_s"][0].isupper() and re.match(r"\s+[A-Z]", after)):
            return None
        return _Atom(**base, spec=_Spec(season=_SEASONS[_season_word(g["bare_s"])]), weak="season")
    if "bare_w" in g:
        return _Atom(**base, spec=_Spec(weekday=_WEEKDAYS[g["bare_w"].lower()]), weak="weekday")
    year = int(g["bare_d_y"]) if "bare_d_y" in g else None
    weak = "day" if "bare_d_the" in g or not g["bare_d"].isdigit() else "number"
    return _Atom(**base, spec=_Spec(day=_int(g["bare_d"]), year=year), weak=weak)


def _season_word(text: str) -> str:
    return text.lower().removesuffix("time")


def _season_year(g: dict, base: dict) -> _Atom | None:
    first_month, year = _SEASONS[_season_word(g["sy_s"])], int(g["sy_y"])
    if "sy_y2" not in g:
        return _Atom(**base, period=_season(year, first_month))
    y2 = int(g["sy_y2"]) if len(g["sy_y2"]) == 4 else year // 100 * 100 + int(g["sy_y2"])
    if y2 == year + 1 and first_month == 12:  # "winter 2023/24"
        return _Atom(**base, period=_season(year, first_month))
    if y2 <= year:
        return None
    return _Atom(**base, period=_Period(_season(year, first_month).start, _season(y2, first_month).end, "span"))


def _year_atom(g: dict, base: dict, question: str, m: re.Match) -> _Atom:
    year = int(g["yr"])
    if "yr2" in g:
        last = year // 100 * 100 + int(g["yr2"])
        if last > year:  # "2019-21"
            return _Atom(**base, period=_Period(_years(year).start, _years(last).end, "span"))
        if int(g["yr2"]) <= 12:  # ISO "2024-03"
            return _Atom(**base, spec=_Spec(month=int(g["yr2"]), year=year))
        return None
    # A bare number is a year after "the" or "of" ("the 2018 World Cup", "the class of 2019"),
    # or before a name or "'s"; not a count ("2000 people").
    strong = re.search(r"\b(?:the|of)\s+$", question[: m.start()], re.IGNORECASE) or re.match(
        r"(?:'s\b|\s+[A-Z])", question[m.end() :]
    )
    return _Atom(**base, spec=_Spec(year=year), weak="" if strong else "year")


def _relative(g: dict, anchor: datetime) -> _Period | None:
    today = anchor.date()
    if "dayrel" in g:
        return _day(today + timedelta(days=-2 if g["dayrel"].lower().startswith("before") else 2))
    if "beforelast" in g:
        return _calendar_unit(g["beforelast"].lower(), anchor, -2)
    if "lastnight" in g:
        return _hours(today, -6, 6)
    if "dayword" in g:
        word = g["dayword"].lower()
        day = today + timedelta(days={"yesterday": -1, "tomorrow": 1}.get(word, 0))
        part = g.get("daypart", "night" if word == "tonight" else "").lower()
        return _hours(day, *_DAY_PARTS[part]) if part else _day(day)
    if "thispart" in g:
        return _hours(today, *_DAY_PARTS[g["thispart"].lower()])
    if "edge" in g:
        whole = _calendar_unit((g.get("edgeunit") or "day").lower(), anchor, 0)
        if g["edge"].lower() == "earlier":
            return _Period(whole.start, anchor, "span")
        return _Period(anchor, whole.end, "span")
    if "ago_n" in g:
        unit = g["ago_u"].lower().rstrip("s")
        return _calendar_unit(unit, anchor, -_number(g["ago_n"]))
    if "roll_n" in g or "roll1" in g:
        unit = (g.get("roll_u") or g["roll1"]).lower().rstrip("s")
        n = _number(g["roll_n"]) if "roll_n" in g else 1
        return _Period(_shift(anchor, unit, -n), anchor, "span")
    return None


_DAY_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}


def _rel_atom(g: dict, base: dict, anchor: datetime) -> _Atom | None:
    rel = " ".join(g["rel"].lower().split())
    offset = {"last": -1, "previous": -1, "this past": -1, "this": 0, "next": 1, "coming": 1}[rel]
    target = g["rel_t"].lower().rstrip(".")
    if g["rel_t"] in ("may", "march") and rel == "this":  # "this may hurt"
        return None
    if target in ("week", "weekend", "month", "year"):
        return _Atom(**base, period=_calendar_unit(target, anchor, offset))
    if target in _WEEKDAYS:
        spec = _Spec(weekday=_WEEKDAYS[target])
    elif target.removesuffix("time") in _SEASONS:
        spec = _Spec(season=_SEASONS[target.removesuffix("time")])
    else:
        spec = _Spec(month=_month_of(target))
    return _Atom(**base, spec=spec, rel={-1: "last", 0: "this", 1: "next"}[offset])


# --- resolution -------------------------------------------------------------------------------


def _guard(resolve, *args):
    # Impossible dates ("31/02/2024", "the 1st century" as year 0) and phrases past datetime's
    # range ("9999 years ago") name nothing.
    try:
        return resolve(*args)
    except (ValueError, OverflowError):
        return None


def _windows(atoms: list[_Atom], question: str, anchor: datetime):
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


def _strong(atom: _Atom, question: str) -> bool:
    """Whether the phrase names a time on its own, without a range around it."""
    if not atom.weak:
        return True
    if question.startswith("'s", atom.end):  # "in April's room": a name
        return False
    if atom.weak in ("month", "season", "year") and atom.mod is not None:
        return True
    if atom.weak in _CUES:
        return atom.cue in _CUES[atom.weak]
    # "on the 19th" is a day; "on the 3rd floor", "at 3" and "the 1st one" are not.
    return atom.weak == "day" and atom.cue == "on" and re.match(r"\s*(?:$|[?.!,;:])", question[atom.end :]) is not None


def _base(atom: _Atom, anchor: datetime) -> _Period | None:
    """The period an atom names before its modifier, placed against the anchor."""
    if atom.period is not None:
        return atom.period
    if atom.weak == "weekend":
        this = _week(anchor.date(), "weekend")
        return this if this.start <= anchor else _week(anchor.date() - timedelta(weeks=1), "weekend")
    spec = atom.spec
    if spec.year is not None:
        if spec.month is None and spec.day is None and spec.season is None:
            return _years(spec.year)
        return _place(spec, spec.year)
    if atom.rel == "last":
        return _latest(spec, anchor, ended=True)
    if atom.rel == "next":
        return _earliest(spec, anchor, strictly=True)
    if atom.rel == "this":
        return _this(spec, anchor)
    return _latest(spec, anchor)


def _modify(p: _Period | None, mod: tuple[str, int] | None) -> _Period | None:
    """The part of p, or the time next to p, that a modifier names."""
    if p is None or mod is None:
        return p
    kind, n = mod
    if kind.startswith("shift "):  # "two weeks before 11 August": the unit holding that moment
        unit = kind.removeprefix("shift ")
        return _calendar_unit(unit, _shift(p.start, unit, n), 0)
    if kind.startswith("next "):  # "the Monday before", "the week after" (n = -1 or 1)
        return _beside(p, kind.removeprefix("next "), n)
    if kind == "part":
        return _slice(p, _PARTS, n)
    if kind == "half":
        return _slice(p, _HALVES, n - 1 if n > 0 else n)
    if kind == "quarter":
        return _slice(p, _QUARTERS, n - 1 if n > 0 else n)
    if kind == "weekof":
        return _week(p.start.date()) if p.grain == "day" else None
    if p.grain not in ("month", "season", "year"):
        return None
    # "the first week of April" counts from the 1st, "the first weekend" from the first Saturday
    length = timedelta(days={"day": 1, "weekend": 2, "week": 7}[kind])
    if kind == "weekend":
        first = p.start + timedelta(days=(5 - p.start.weekday()) % 7)
        last_day = (p.end - timedelta(days=1)).date()  # back to the period's last Saturday
        last = _day(last_day - timedelta(days=(last_day.weekday() - 5) % 7)).start
    else:
        first, last = p.start, p.end - length
    start = last if n < 0 else first + (length if kind == "day" else timedelta(weeks=1)) * (n - 1)
    if start >= p.end:
        return None
    return _Period(start, min(start + length, p.end) if kind == "week" else start + length, kind)


def _beside(p: _Period, unit: str, direction: int) -> _Period | None:
    """The unit just before (direction -1) or after (1) the period p."""
    if unit in _WEEKDAYS:
        spec = _Spec(weekday=_WEEKDAYS[unit])
        return _latest(spec, p.start, ended=True) if direction < 0 else _earliest(spec, p.end)
    if unit == "weekend":
        if direction < 0:
            weekend = _week(p.start.date(), unit)
            return weekend if weekend.end <= p.start else _week(p.start.date() - timedelta(weeks=1), unit)
        weekend = _week(p.end.date(), unit)
        return weekend if weekend.start >= p.end else _week(p.end.date() + timedelta(weeks=1), unit)
    if direction < 0:
        return _Period(_shift(p.start, unit, -1), p.start, unit)
    return _Period(p.end, _shift(p.end, unit, 1), unit)


def _window(p: _Period | None, start: int, end: int, question: str) -> TimeWindow | None:
    if p is None:
        return None
    return TimeWindow(p.start, p.end, question[start:end], (start, end))


def _standalone(atom: _Atom, question: str, anchor: datetime) -> TimeWindow | None:
    if not _strong(atom, question):
        return None
    p = _modify(_base(atom, anchor), atom.mod)
    if p is None:
        return None
    if atom.cue == "since" and anchor > p.start:
        p = _Period(p.start, anchor, "span")
    elif atom.cue == "before":
        p = _Period(_OPEN_START, p.start, "span")
    elif atom.cue == "after":
        p = _Period(p.end, _OPEN_END, "span")
    return _window(p, atom.start, atom.end, question)


def _range(a: _Atom, b: _Atom, question: str, anchor: datetime) -> TimeWindow | None:
    """One window from "between A and B", "from A to B", "A-B", "A to B" (A, B adjacent)."""
    gap = question[a.end : b.start]
    connector = _GAP.fullmatch(gap)
    if connector is not None:
        word = connector.group(1).lower()
        if b.cue:
            return None
    elif not gap.strip() and b.cue in ("until", "till"):  # "from 3 May until 5 June"
        word = b.cue
    else:
        return None
    if word not in _CONNECTORS.get(a.cue, _PLAIN_CONNECTORS):
        return None
    if a.cue not in _CONNECTORS and not (
        _strong(a, question) or _strong(b, question) or _years_dash(a, b, word, question)
    ):
        return None
    a_spec, b_spec = a.spec, b.spec
    # A bare day borrows its month (and year) from the other end: "20-25 April", "April 20-25".
    if a_spec is not None and a.weak in ("day", "number"):
        if b_spec is None or b_spec.month is None or b_spec.day is None:
            return None
        a_spec = _Spec(month=b_spec.month, day=a_spec.day, year=a_spec.year)
    if b_spec is not None and b.weak in ("day", "number"):
        if a_spec is None or a_spec.month is None or a_spec.day is None:
            return None
        b_spec = _Spec(month=a_spec.month, day=b_spec.day, year=b_spec.year or a_spec.year)
    a, b = replace(a, spec=a_spec), replace(b, spec=b_spec)
    if _is_placed(a) or not _is_placed(b):
        first = _base(a, anchor)
        # the second end, when it names no year, is the first such time after the first end
        second = _base(b, anchor) if _is_placed(b) or first is None else _earliest(b.spec, first.start)
    else:
        second = _base(b, anchor)
        first = _latest(a.spec, second.start) if second is not None else None
    first, second = _modify(first, a.mod), _modify(second, b.mod)
    if first is None or second is None:
        return None
    return _window(
        _Period(min(first.start, second.start), max(first.end, second.end), "span"), a.start, b.end, question
    )


def _years_dash(a: _Atom, b: _Atom, word: str, question: str) -> bool:
    """Whether two bare years joined by a dash name years ("2010-2014"), not a count
    ("2000-2500 points")."""
    return (
        a.weak == b.weak == "year"
        and word in _DASHES
        and 1000 <= a.spec.year < b.spec.year < 2200
        and not re.match(r"\s+[a-z]", question[b.end :])
    )


def _is_placed(atom: _Atom) -> bool:
    """Whether the atom names its year (or is relative): it needs no other end to be placed."""
    return atom.spec is None or atom.spec.year is not None or bool(atom.rel)
