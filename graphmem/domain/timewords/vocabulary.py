"""The words a question names times with: month, weekday, season and number words, the cues
that make a word a time ("in May", not "I may"), and the one expression that finds the phrases."""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
}  # fmt: skip
MONTH_ABBR = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
               "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}  # fmt: skip
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_WEEKDAY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
                 "fri": 4, "sat": 5, "sun": 6}  # fmt: skip
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
DECADE_WORDS = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
                 "seventies": 70, "eighties": 80, "nineties": 90}  # fmt: skip
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4, "fifth": 5, "5th": 5, "last": -1, "final": -1, "latter": -1}  # fmt: skip

# Cues that make a bare month, season or year a time ("in May", not "I may"); weekdays and
# weekends take their own ("on Monday", "over the weekend"), since "on May" or "in Monday" are
# not how people name them.
_PERIOD_CUES = {"in", "during", "throughout", "since", "before", "after", "until", "till",
                "around", "circa", "as of", "back in", "sometime in"}  # fmt: skip
CUES = {
    "month": _PERIOD_CUES,
    "season": _PERIOD_CUES,
    "year": _PERIOD_CUES | {"by", "from"},  # not for months: "a painting by June"
    "weekday": {"on", "since", "before", "after", "until", "till", "by"},
    "weekend": {"on", "over", "at", "during", "in", "since", "before", "after"},
}


def _words(*tables: Mapping[str, int]) -> str:
    # Longest first, so "march" is tried before "mar" and "thurs" before "thu".
    return "|".join(sorted((w for t in tables for w in t), key=len, reverse=True))


_MONTH = rf"(?:(?:{_words(MONTHS)})(?!\w)|(?:{_words(MONTH_ABBR)})(?:\.|(?!\w)))"
_WEEKDAY = rf"(?:{_words(WEEKDAYS)})(?!\w)"
_ANY_WEEKDAY = rf"(?:{_words(WEEKDAYS, _WEEKDAY_ABBR)})\.?"
_SEASON = rf"(?:{_words(SEASONS)})(?:time)?(?!\w)"
# A digit may follow "-" (the end of "20-25 April") but not ".", ":" or "/" ("3.5", "10:30").
_DAY = r"(?<![\w.:/$£€])(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\w)"
_YEAR = r"(?<![\w.:/$£€])[12]\d{3}(?!\w)"
_NUM = rf"(?:\d{{1,4}}|a\s+couple\s+of|{_words(NUMBERS)})"
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
        rf"(?:the\s+)?(?:(?P<dec4>[12]\d\d0)|'?(?P<dec2>\d0))'?s(?!\w)|(?:the\s+)?(?P<decw>{_words(DECADE_WORDS)})(?!\w)",
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
PHRASE = re.compile(rf"(?<!\w)(?:{_CUE})?(?:{_MOD})?(?:{_ATOMS})", re.IGNORECASE)
# Most questions name no time: one cheap search turns them away before the phrase scan.
TRIGGER = re.compile(
    rf"\d|\b(?:{_words(MONTHS, MONTH_ABBR, WEEKDAYS, SEASONS, DECADE_WORDS)}|yesterday|today"
    r"|tonight|tomorrow|week|month|year|decade|ago|night|morning|afternoon|evening)",
    re.IGNORECASE,
)
DASHES = {"-", "–", "—"}
PLAIN_CONNECTORS = {"to", "until", "till", "through", "thru"} | DASHES
CONNECTORS = {"between": {"and"}, "from": PLAIN_CONNECTORS}  # what each opening word takes
NAMES_YEAR = re.compile(r"\d{4}")
# Month and season words that begin names of events: "the next winter Olympics", "March Madness"
NAMED_AFTER = re.compile(r"\s+(?:olympics?|paralympics|games|madness)\b", re.IGNORECASE)
GAP = re.compile(r"\s*(and|to|until|till|through|thru|-|–|—)\s*", re.IGNORECASE)
#: Which third of a period a part word names ("mid-March": the middle one).
PART_INDEX = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
#: The hours of a day each part of it spans, from its midnight (the night runs into the next day).
DAY_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
