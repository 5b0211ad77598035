"""The phrases a question names times with, each read into an ``Atom``: a period already placed
("two weeks ago"), or a day, month, season or year still to place against the anchor."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from graphmem.domain.timewords.periods import (
    Period,
    Spec,
    calendar_unit,
    day_period,
    hours_period,
    season_period,
    shift,
    years_period,
)
from graphmem.domain.timewords.vocabulary import (
    DAY_PARTS,
    DECADE_WORDS,
    MONTH_ABBR,
    MONTHS,
    NAMED_AFTER,
    NUMBERS,
    ORDINALS,
    PART_INDEX,
    SEASONS,
    WEEKDAYS,
)


@dataclass(frozen=True)
class Atom:
    """One phrase found in the question: either a resolved period or a spec to place."""

    start: int  # the phrase, cue and modifier included
    end: int
    cue: str
    mod: tuple[str, int] | None  # (kind, number): see _modify
    period: Period | None = None
    spec: Spec | None = None
    rel: str = ""  # last | this | next, for a spec
    # what the phrase is when it may not be a time on its own (see _strong): month, season,
    # year, weekday, weekend, day ("the 19th") or number ("20")
    weak: str = ""


#: A phrase's named groups that matched, by name (``PHRASE``).
Groups = dict[str, str]
#: The fields every atom of a phrase shares: where it stands, its cue and its modifier.
Base = dict[str, Any]


def _int(text: str) -> int:
    """The number a day or a year starts with ("19th" is 19)."""
    digits = re.match(r"\d+", text)
    if digits is None:
        raise ValueError(f"{text!r} starts with no number")
    return int(digits.group())


def _month_of(text: str) -> int:
    word = text.lower().rstrip(".")
    return MONTHS.get(word) or MONTH_ABBR[word]


def _number(text: str) -> int:
    text = text.lower()
    if text[0].isdigit():
        return int(text)
    return 2 if "couple" in text else NUMBERS[text]


def _two_digit_year(yy: int, anchor: datetime) -> int:
    """A two-digit year: "24" is 2024, unless that is over ten years after the anchor ("99": 1999)."""
    return 2000 + yy if 2000 + yy <= anchor.year + 10 else 1900 + yy


def _modifier(g: Groups) -> tuple[str, int] | None:
    if "part" in g or "partof" in g:
        return ("part", PART_INDEX[(g.get("part") or g["partof"]).lower()])
    if "nth" in g:
        return (g["nth_unit"].lower(), ORDINALS[g["nth"].lower()])
    if "half" in g:
        return ("half", ORDINALS[g["half"].lower()])
    if "quarter" in g or "qnum" in g:
        return ("quarter", ORDINALS[g["quarter"].lower()] if "quarter" in g else int(g["qnum"][1]))
    if "weekof" in g:
        return ("weekof", 0)
    if "off_dir" in g:
        sign = -1 if g["off_dir"].lower() == "before" else 1
        if "off_n" in g:
            return ("shift " + g["off_u"].lower().rstrip("s"), sign * _number(g["off_n"]))
        return ("next " + g["off_w"].lower(), sign)
    return None


def read_atom(m: re.Match[str], question: str, anchor: datetime) -> Atom | None:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if ("bare_m" in g or "bare_s" in g or "rel_t" in g) and NAMED_AFTER.match(question, m.end()):
        return None
    cue = " ".join(g.get("cue", "").lower().split())
    base: Base = {"start": m.start(), "end": m.end(), "cue": cue, "mod": _modifier(g)}

    if "iso_y" in g:
        spec = Spec(month=int(g["iso_m"]), day=int(g["iso_d"]), year=int(g["iso_y"]))
        return Atom(**base, spec=spec)
    if "num_a" in g:
        a, b, y = int(g["num_a"]), int(g["num_b"]), int(g["num_y"])
        day, month = (b, a) if b > 12 else (a, b)
        year = y if len(g["num_y"]) == 4 else _two_digit_year(y, anchor)
        return Atom(**base, spec=Spec(month=month, day=day, year=year))
    for key in ("dmy", "mdy"):
        if key + "_m" in g:
            named = _int(g[key + "_y"]) if key + "_y" in g else None
            spec = Spec(month=_month_of(g[key + "_m"]), day=_int(g[key + "_d"]), year=named)
            return Atom(**base, spec=spec)
    if "my_m" in g:
        return Atom(**base, spec=Spec(month=_month_of(g["my_m"]), year=int(g["my_y"])))
    if "sy_s" in g:
        return _season_year(g, base)
    if "cent" in g:
        return Atom(**base, period=years_period((int(g["cent"]) - 1) * 100, 100, "century"))
    if "dec4" in g:
        first = int(g["dec4"])
        if first % 100 == 0 and first != 2000:  # "the 1800s" is the century
            return Atom(**base, period=years_period(first, 100, "century"))
        return Atom(**base, period=years_period(first, 10, "decade"))
    if "dec2" in g or "decw" in g:
        if not re.search(r"\bthe\b|'", m.group(), re.IGNORECASE):  # "in her 20s" is an age
            return None
        tens = int(g["dec2"]) if "dec2" in g else DECADE_WORDS[g["decw"].lower()]
        century = anchor.year // 100 * 100  # the latest such decade begun: "the 90s" in 2024 is 1990
        first = century + tens if century + tens <= anchor.year else century - 100 + tens
        return Atom(**base, period=years_period(first, 10, "decade"))
    if "theyear" in g:
        return Atom(**base, period=years_period(int(g["theyear"])))
    if "yr" in g:
        return _year_atom(g, base, question, m)
    period = _relative(g, anchor)
    if period is not None:
        return Atom(**base, period=period)
    if "rel" in g:
        return _rel_atom(g, base, anchor)
    if "weekend" in g:
        return Atom(**base, spec=None, weak="weekend")
    if "bare_m" in g:
        return Atom(**base, spec=Spec(month=_month_of(g["bare_m"])), weak="month")
    if "bare_s" in g:
        after = question[m.end() :]
        # "the fall of Rome", "the Winter Olympics"
        if re.match(r"\s+of\b", after) or (g["bare_s"][0].isupper() and re.match(r"\s+[A-Z]", after)):
            return None
        return Atom(**base, spec=Spec(season=SEASONS[_season_word(g["bare_s"])]), weak="season")
    if "bare_w" in g:
        return Atom(**base, spec=Spec(weekday=WEEKDAYS[g["bare_w"].lower()]), weak="weekday")
    named = int(g["bare_d_y"]) if "bare_d_y" in g else None
    weak = "day" if "bare_d_the" in g or not g["bare_d"].isdigit() else "number"
    return Atom(**base, spec=Spec(day=_int(g["bare_d"]), year=named), weak=weak)


def _season_word(text: str) -> str:
    return text.lower().removesuffix("time")


def _season_year(g: Groups, base: Base) -> Atom | None:
    first_month, year = SEASONS[_season_word(g["sy_s"])], int(g["sy_y"])
    if "sy_y2" not in g:
        return Atom(**base, period=season_period(year, first_month))
    y2 = int(g["sy_y2"]) if len(g["sy_y2"]) == 4 else year // 100 * 100 + int(g["sy_y2"])
    if y2 == year + 1 and first_month == 12:  # "winter 2023/24"
        return Atom(**base, period=season_period(year, first_month))
    if y2 <= year:
        return None
    return Atom(
        **base, period=Period(season_period(year, first_month).start, season_period(y2, first_month).end, "span")
    )


def _year_atom(g: Groups, base: Base, question: str, m: re.Match[str]) -> Atom | None:
    year = int(g["yr"])
    if "yr2" in g:
        last = year // 100 * 100 + int(g["yr2"])
        if last > year:  # "2019-21"
            return Atom(**base, period=Period(years_period(year).start, years_period(last).end, "span"))
        if int(g["yr2"]) <= 12:  # ISO "2024-03"
            return Atom(**base, spec=Spec(month=int(g["yr2"]), year=year))
        return None
    # A bare number is a year after "the" or "of" ("the 2018 World Cup", "the class of 2019"),
    # or before a name or "'s"; not a count ("2000 people").
    strong = re.search(r"\b(?:the|of)\s+$", question[: m.start()], re.IGNORECASE) or re.match(
        r"(?:'s\b|\s+[A-Z])", question[m.end() :]
    )
    return Atom(**base, spec=Spec(year=year), weak="" if strong else "year")


def _relative(g: Groups, anchor: datetime) -> Period | None:
    today = anchor.date()
    if "dayrel" in g:
        return day_period(today + timedelta(days=-2 if g["dayrel"].lower().startswith("before") else 2))
    if "beforelast" in g:
        return calendar_unit(g["beforelast"].lower(), anchor, -2)
    if "lastnight" in g:
        return hours_period(today, -6, 6)
    if "dayword" in g:
        word = g["dayword"].lower()
        day = today + timedelta(days={"yesterday": -1, "tomorrow": 1}.get(word, 0))
        part = g.get("daypart", "night" if word == "tonight" else "").lower()
        return hours_period(day, *DAY_PARTS[part]) if part else day_period(day)
    if "thispart" in g:
        return hours_period(today, *DAY_PARTS[g["thispart"].lower()])
    if "edge" in g:
        whole = calendar_unit((g.get("edgeunit") or "day").lower(), anchor, 0)
        if g["edge"].lower() == "earlier":
            return Period(whole.start, anchor, "span")
        return Period(anchor, whole.end, "span")
    if "ago_n" in g:
        unit = g["ago_u"].lower().rstrip("s")
        return calendar_unit(unit, anchor, -_number(g["ago_n"]))
    if "roll_n" in g or "roll1" in g:
        unit = (g.get("roll_u") or g["roll1"]).lower().rstrip("s")
        n = _number(g["roll_n"]) if "roll_n" in g else 1
        return Period(shift(anchor, unit, -n), anchor, "span")
    return None


def _rel_atom(g: Groups, base: Base, anchor: datetime) -> Atom | None:
    rel = " ".join(g["rel"].lower().split())
    offset = {"last": -1, "previous": -1, "this past": -1, "this": 0, "next": 1, "coming": 1}[rel]
    target = g["rel_t"].lower().rstrip(".")
    if g["rel_t"] in ("may", "march") and rel == "this":  # "this may hurt"
        return None
    if target in ("week", "weekend", "month", "year"):
        return Atom(**base, period=calendar_unit(target, anchor, offset))
    if target in WEEKDAYS:
        spec = Spec(weekday=WEEKDAYS[target])
    elif target.removesuffix("time") in SEASONS:
        spec = Spec(season=SEASONS[target.removesuffix("time")])
    else:
        spec = Spec(month=_month_of(target))
    return Atom(**base, spec=spec, rel={-1: "last", 0: "this", 1: "next"}[offset])
