"""Time words in questions: the window find_window resolves, by convention and by property."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.timewords import find_window
from graphmem.errors import InvalidInput

UTC = UTC
FRI = datetime(2024, 5, 10, 15, 30, tzinfo=UTC)  # a Friday
SUN = datetime(2023, 10, 1, 9, tzinfo=UTC)
WED = datetime(2025, 1, 15, 20, tzinfo=UTC)  # in winter


def shown(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%d" if dt.time() == datetime.min.time() else "%Y-%m-%dT%H:%M")


def window(question: str, anchor: datetime = FRI) -> tuple[str, str] | None:
    w = find_window(question, anchor)
    return None if w is None else (shown(w.start), shown(w.end))


@pytest.mark.parametrize(
    ("question", "anchor", "expected"),
    [
        # days, in the forms people write them
        ("What did I cook on 19 March 2024?", FRI, ("2024-03-19", "2024-03-20")),
        ("Where was Alice on March 19th, 2024?", FRI, ("2024-03-19", "2024-03-20")),
        ("notes from 2024-03-19", FRI, ("2024-03-19", "2024-03-20")),
        ("What happened on 03/04/2024?", FRI, ("2024-04-03", "2024-04-04")),  # day first
        ("Who called on 04/19/2024?", FRI, ("2024-04-19", "2024-04-20")),  # 19 is no month
        ("What did we eat on march 19th", FRI, ("2024-03-19", "2024-03-20")),
        ("Did I run on May 12?", FRI, ("2023-05-12", "2023-05-13")),  # no year: the last one
        ("What did I write on the 19th?", FRI, ("2024-04-19", "2024-04-20")),
        ("What did Omar share on December 1,2023?", WED, ("2023-12-01", "2023-12-02")),
        # months, years, decades, centuries
        ("where did Alice live in March 2021?", FRI, ("2021-03-01", "2021-04-01")),
        ("What did I buy in March?", FRI, ("2024-03-01", "2024-04-01")),
        ("What did we do in December?", FRI, ("2023-12-01", "2024-01-01")),
        ("Which books did I read in 2021?", FRI, ("2021-01-01", "2022-01-01")),
        ("What changed during 2019?", FRI, ("2019-01-01", "2020-01-01")),
        ("Who won the 2018 World Cup?", FRI, ("2018-01-01", "2019-01-01")),
        ("What music was big in the 1990s?", FRI, ("1990-01-01", "2000-01-01")),
        ("What did people wear in the '60s?", FRI, ("1960-01-01", "1970-01-01")),
        ("Which 19th-century novels?", FRI, ("1800-01-01", "1900-01-01")),
        ("Who ruled during the 1500s?", FRI, ("1500-01-01", "1600-01-01")),
        # seasons: meteorological, winter named by the year it begins
        ("Where did we go in summer 2023?", FRI, ("2023-06-01", "2023-09-01")),
        ("Any trips in winter 2019?", FRI, ("2019-12-01", "2020-03-01")),
        ("How cold was it last winter?", FRI, ("2023-12-01", "2024-03-01")),
        ("How cold was it last winter?", WED, ("2023-12-01", "2024-03-01")),  # this one is on
        ("What did we plant last spring?", FRI, ("2023-03-01", "2023-06-01")),
        ("What did we do in the winter?", WED, ("2024-12-01", "2025-03-01")),
        # weeks and weekends: Monday to Sunday
        ("in the first week of April 2024", FRI, ("2024-04-01", "2024-04-08")),
        ("the last week of March", FRI, ("2024-03-25", "2024-04-01")),
        ("the week of 3 April 2024", FRI, ("2024-04-01", "2024-04-08")),
        ("what did i eat last week", FRI, ("2024-04-29", "2024-05-06")),
        ("What's on this week?", FRI, ("2024-05-06", "2024-05-13")),
        ("Who came over last weekend?", FRI, ("2024-05-04", "2024-05-06")),
        ("Where did we go over the weekend?", SUN, ("2023-09-30", "2023-10-02")),
        ("the first weekend of August 2023", FRI, ("2023-08-05", "2023-08-07")),
        # ranges
        ("between 20 and 25 April 2024", FRI, ("2024-04-20", "2024-04-26")),
        ("20-25 April", FRI, ("2024-04-20", "2024-04-26")),
        ("April 20-25, 2024", FRI, ("2024-04-20", "2024-04-26")),
        ("from March to May 2022", FRI, ("2022-03-01", "2022-06-01")),
        ("from December to February", FRI, ("2023-12-01", "2024-03-01")),
        ("from 3 May until 5 June 2023", FRI, ("2023-05-03", "2023-06-06")),
        ("between 2019 and 2021", FRI, ("2019-01-01", "2022-01-01")),
        ("Who led it 2010–2014?", FRI, ("2010-01-01", "2015-01-01")),
        ("from Monday to Wednesday", FRI, ("2024-05-06", "2024-05-09")),
        # parts: thirds, halves, quarters
        ("in mid-March", FRI, ("2024-03-11", "2024-03-21")),
        ("early 2020", FRI, ("2020-01-01", "2020-05-01")),
        ("late May 2023", FRI, ("2023-05-21", "2023-06-01")),
        ("the end of May", FRI, ("2024-05-21", "2024-06-01")),
        ("the beginning of 2021", FRI, ("2021-01-01", "2021-05-01")),
        ("the early 1990s", FRI, ("1990-01-01", "1994-01-01")),
        ("the end of last month", FRI, ("2024-04-21", "2024-05-01")),
        ("the second half of 2023", FRI, ("2023-07-01", "2024-01-01")),
        ("Q3 2022", FRI, ("2022-07-01", "2022-10-01")),
        ("the last day of February 2024", FRI, ("2024-02-29", "2024-03-01")),
        # relative: whole calendar units, or rolling with "the past"
        ("What did I eat yesterday?", FRI, ("2024-05-09", "2024-05-10")),
        ("today", FRI, ("2024-05-10", "2024-05-11")),
        ("last night", FRI, ("2024-05-09T18:00", "2024-05-10T06:00")),
        ("this morning", FRI, ("2024-05-10", "2024-05-10T12:00")),
        ("last month", FRI, ("2024-04-01", "2024-05-01")),
        ("last year", FRI, ("2023-01-01", "2024-01-01")),
        ("two years ago", FRI, ("2022-01-01", "2023-01-01")),
        ("3 days ago", FRI, ("2024-05-07", "2024-05-08")),
        ("a week ago", FRI, ("2024-04-29", "2024-05-06")),
        ("last Monday", FRI, ("2024-05-06", "2024-05-07")),
        ("next Tuesday", SUN, ("2023-10-03", "2023-10-04")),
        ("in the past 3 days", FRI, ("2024-05-07T15:30", "2024-05-10T15:30")),
        ("earlier this year", WED, ("2025-01-01", "2025-01-15T20:00")),
        ("the day before yesterday", WED, ("2025-01-13", "2025-01-14")),
        # next to a date
        ("the Monday before 24 July 2023", FRI, ("2023-07-17", "2023-07-18")),
        ("the Saturday after 28 October 2023", FRI, ("2023-11-04", "2023-11-05")),
        ("the week before 16 November 2023", FRI, ("2023-11-09", "2023-11-16")),
        ("two weeks before 11 August 2023", FRI, ("2023-07-24", "2023-07-31")),
        # since / before / after
        ("Since 2019, where has Alice worked?", FRI, ("2019-01-01", "2024-05-10T15:30")),
        # several times: the most specific; a tie goes to the one naming its year
        ("What did I do in 2023, on 19 March?", FRI, ("2024-03-19", "2024-03-20")),
        ("What did I do last Friday, on 23 January 2022?", SUN, ("2022-01-23", "2022-01-24")),
    ],
)
def test_window(question: str, anchor: datetime, expected: tuple[str, str]):
    assert window(question, anchor) == expected


def test_open_ends_before_and_after():
    before = find_window("Where did Alice live before 2020?", FRI)
    after = find_window("What did Alice do after March 2021?", FRI)
    assert (before.start, before.end) == (datetime.min.replace(tzinfo=UTC), datetime(2020, 1, 1, tzinfo=UTC))
    assert (after.start, after.end) == (datetime(2021, 4, 1, tzinfo=UTC), datetime.max.replace(tzinfo=UTC))


@pytest.mark.parametrize(
    "question",
    [
        "I may go to the park",
        "Will the protesters march on the capital?",
        "Who took second place?",
        "How many people came? 5 people?",
        "Can we meet at 3?",
        "Is this the 1st one you bought?",
        "Will you remind me?",
        "Where did she buy her Sunday best?",
        "When did Caroline go to the support group?",
        "What did Melanie paint recently?",
        "Did we talk about it a few days ago?",
        "What does she do on Sundays?",
        "What did she do in her 20s?",
        "This may sound odd, but where are my keys?",
        "How did the fall of Rome happen?",
        "What happened in the Winter Olympics?",
        "Where will the next Winter Olympics be held?",
        "Was Auburn ever in March Madness?",
        "Which 2000 people signed?",
        "Who scored 2000-2500 points?",
        "What did Sam say about the 3rd floor office?",
        "Did June like the gift from May?",
        "Who wrote 1984?",
        "Mix 3/4 cup of flour",
        "What did I do between 9 and 5?",
    ],
)
def test_no_window(question: str):
    assert find_window(question, FRI) is None


def test_the_phrase_is_reported_as_written():
    question = "What did I cook on 19 March 2024?"
    w = find_window(question, FRI)
    assert w.text == "on 19 March 2024"
    assert question[w.span[0] : w.span[1]] == w.text


def test_a_naive_anchor_is_refused():
    with pytest.raises(InvalidInput):
        find_window("yesterday", datetime(2024, 5, 10))


def test_the_anchor_counts_as_the_same_instant_in_any_zone():
    # 23:30 on 9 May in New York is already 10 May in UTC: "yesterday" is 9 May UTC.
    new_york = FRI.replace(hour=3, minute=30).astimezone(timezone(timedelta(hours=-4)))
    assert window("yesterday", new_york) == ("2024-05-09", "2024-05-10")


# --- properties -------------------------------------------------------------------------------

anchors = st.datetimes(min_value=datetime(1950, 1, 1), max_value=datetime(2090, 12, 31)).map(
    lambda d: d.replace(tzinfo=UTC)
)
days = st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31))


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


RENDERINGS = [
    lambda d: f"{d.day} {d:%B} {d.year}",
    lambda d: f"{d:%B} {d.day}, {d.year}",
    lambda d: f"the {ordinal(d.day)} of {d:%B} {d.year}",
    lambda d: f"{d:%b} {ordinal(d.day)} {d.year}",
    lambda d: f"{d:%A}, {d.day} {d:%B}, {d.year}",
    lambda d: d.isoformat(),
    lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
    lambda d: f"{d.day}.{d.month}.{d.year}",
]
CARRIERS = ["What did I do on {}?", "{}: where was Alice?", "diary for {}, what did we eat", "where was bob {} at 3pm"]


@given(days, st.sampled_from(RENDERINGS), st.sampled_from(CARRIERS), anchors)
def test_a_written_date_is_that_day(day: date, render, carrier: str, anchor: datetime):
    w = find_window(carrier.format(render(day)), anchor)
    assert w is not None
    assert (w.start, w.end - w.start) == (datetime(day.year, day.month, day.day, tzinfo=UTC), timedelta(days=1))


@given(days, st.sampled_from(["in {:%B %Y}", "during {:%B of %Y}", "{:%b %Y}"]), anchors)
def test_a_written_month_is_that_month(day: date, form: str, anchor: datetime):
    w = find_window(f"What happened {form.format(day)}?", anchor)
    next_month = date(day.year + day.month // 12, day.month % 12 + 1, 1)
    assert (w.start.date(), w.end.date()) == (day.replace(day=1), next_month)


@given(days, days)
def test_a_range_of_dates_covers_both_ends(a: date, b: date):
    a, b = min(a, b), max(a, b)
    w = find_window(f"Where was I between {a:%d %B %Y} and {b:%B %d, %Y}?", FRI)
    assert (w.start.date(), w.end.date()) == (a, b + timedelta(days=1))


@given(st.integers(0, 2000), anchors)
def test_n_days_ago_is_that_day(n: int, anchor: datetime):
    w = find_window(f"What did I do {n} days ago?", anchor)
    assert (w.start.date(), w.end - w.start) == ((anchor - timedelta(days=n)).date(), timedelta(days=1))


@given(st.integers(0, 500), anchors)
def test_n_weeks_ago_is_the_monday_to_sunday_week_holding_that_day(n: int, anchor: datetime):
    w = find_window(f"What did I do {n} weeks ago?", anchor)
    then = (anchor - timedelta(weeks=n)).date()
    assert w.start.weekday() == 0 and w.end - w.start == timedelta(days=7)
    assert w.start.date() <= then < w.end.date()


@given(st.integers(0, 300), anchors)
def test_n_months_ago_is_that_calendar_month(n: int, anchor: datetime):
    w = find_window(f"Where was I {n} months ago?", anchor)
    year, month = divmod(anchor.year * 12 + anchor.month - 1 - n, 12)
    assert (w.start.year, w.start.month, w.start.day) == (year, month + 1, 1)
    assert (w.end - timedelta(days=1)).month == month + 1


@given(st.sampled_from(["January", "February", "March", "April", "May", "June", "July", "August",
                        "September", "October", "November", "December"]), anchors)  # fmt: skip
def test_a_month_without_a_year_is_the_latest_one_begun(month: str, anchor: datetime):
    w = find_window(f"What did we do in {month}?", anchor)
    assert f"{w.start:%B}" == month
    assert w.start <= anchor < w.start.replace(year=w.start.year + 1)


PHRASES = st.sampled_from(
    [
        "on {d} {m} {y}", "in {m}", "in {m} {y}", "last {wd}", "on {wd}", "next {wd}", "this {wd}",
        "{n} days ago", "{n} weeks ago", "{n} months ago", "{n} years ago", "in the past {n} days",
        "last week", "this week", "last weekend", "last month", "next year", "yesterday", "tonight",
        "last night", "this morning", "in early {m}", "at the end of {m} {y}", "mid-{y}",
        "between {d} and {n} {m} {y}", "from {m} to {m} {y}", "{d}-{n} {m}", "in the summer",
        "last winter", "winter {y}", "the first week of {m}", "the last weekend of {m} {y}",
        "the {wd} before {d} {m} {y}", "{n} days after {d} {m}", "since {y}", "in the {d}0s",
        "the first quarter of {y}", "the second half of {m}", "on the {d}th?", "earlier this month",
    ]
)  # fmt: skip


@given(
    PHRASES,
    st.integers(1, 31),
    st.integers(0, 40),
    st.sampled_from(["January", "February", "April", "June", "September", "December", "Feb"]),
    st.integers(1000, 2999),
    st.sampled_from(["Monday", "Thursday", "Sunday"]),
    anchors,
)
def test_windows_are_aware_utc_and_non_empty(phrase, d, n, m, y, wd, anchor):
    question = "What happened " + phrase.format(d=d, n=n, m=m, y=y, wd=wd) + "?"
    w = find_window(question, anchor)
    if w is not None:
        assert w.start.tzinfo is UTC and w.end.tzinfo is UTC
        assert w.start < w.end
        assert question[w.span[0] : w.span[1]] == w.text


@given(st.text(max_size=80), anchors)
def test_any_text_gives_a_window_or_none(question: str, anchor: datetime):
    w = find_window(question, anchor)
    assert w is None or (w.start < w.end and question[w.span[0] : w.span[1]] == w.text)


# Words that look like dates but, without a cue such as "in" or "on", are not.
HOMONYMS = ["may", "March", "will", "second", "Sunday", "best", "fall", "spring", "the", "I", "we",
            "go", "people", "place", "one", "a", "to", "park", "and", "June", "April", "August"]  # fmt: skip


@given(st.lists(st.sampled_from(HOMONYMS), min_size=1, max_size=12))
def test_homonyms_without_a_cue_name_no_time(words: list[str]):
    assert find_window(" ".join(words) + "?", FRI) is None
