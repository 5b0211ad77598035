"""Questions that name a time, through the public API on every adapter: the named time ranks
the units told or true near it, and (with no as-of point) decides what is visible."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.domain.models import Fact
from tests.conftest import fresh_scope

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)

MEALS = [
    "pasta with tomato",
    "a green curry",
    "lentil soup",
    "risotto with mushrooms",
    "fish tacos",
    "pancakes",
    "a mushroom omelette",
    "ramen",
    "roast chicken",
    "a bean chili",
]


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_named_day_finds_that_days_entry_among_near_identical_ones(mem):
    s = fresh_scope()
    start = d("2024-03-12T19:00:00")
    for n, meal in enumerate(MEALS):
        mem.remember(f"Tonight I cooked {meal} for dinner.", s, at=start + timedelta(days=n), extractor="none")
    hits = mem.recall("What did I cook on 19 March 2024?", s, k=3)
    assert hits[0].unit.content == "Tonight I cooked ramen for dinner."
    assert hits.window.start == d("2024-03-19") and hits.window.end == d("2024-03-20")
    week = mem.recall("What did I cook in the second week of March 2024?", s, k=10)
    assert week.window is not None
    days = {h.unit.source.occurred_at.date() for h in week[:5]}
    assert days and all(week.window.start.date() <= day < week.window.end.date() for day in days)
    yesterday = mem.recall("what did I cook yesterday?", s, k=3, as_of=d("2024-03-16T12:00:00"))
    assert yesterday[0].unit.content == "Tonight I cooked risotto with mushrooms for dinner."


def test_a_named_month_decides_what_is_visible_unless_as_of_is_given(mem):
    s = fresh_scope()
    for city, valid in (("Paris", "2019-09-01"), ("Berlin", "2023-04-01")):
        mem.remember(
            city,
            s,
            facts=[
                Fact(
                    subject="Alice",
                    predicate="lives_in",
                    object=city,
                    single_valued=True,
                    content=f"Alice lives in {city}",
                    valid_at=d(valid),
                )
            ],
        )
    past = mem.recall("where did Alice live in March 2021?", s, k=5)
    assert [h.unit.content for h in past] == ["Alice lives in Paris"]
    now = mem.recall("where does Alice live?", s, k=5)
    assert [h.unit.content for h in now] == ["Alice lives in Berlin"] and now.window is None
    # an explicit as-of point wins: the named month only ranks
    fixed = mem.recall("where did Alice live in March 2021?", s, k=5, as_of=d("2024-01-01"))
    assert [h.unit.content for h in fixed] == ["Alice lives in Berlin"] and fixed.window is not None


def test_a_named_year_ranks_what_was_true_in_it_not_what_started_in_it(mem):
    # A state true through the window is as near as one starting in it: the right club of a
    # stint begun years before the named year must not lose to other players' new stints.
    s = fresh_scope()
    facts = [
        Fact(
            subject="Marco Rossi",
            predicate="plays_for",
            object="Torino",
            single_valued=True,
            content="Marco Rossi plays for Torino",
            valid_at=d("2001-01-01"),
            invalid_at=d("2006-01-01"),
        )
    ]
    for n in range(12):
        facts.append(
            Fact(
                subject=f"Player {n}",
                predicate="plays_for",
                object=f"Club {n}",
                single_valued=True,
                content=f"Player {n} plays for Club {n}",
                valid_at=d("2003-01-01"),
                invalid_at=d("2004-01-01"),
            )
        )
    mem.remember("careers", s, facts=facts)
    for as_of in (None, d("2003-07-01")):
        hits = mem.recall("which club did Marco Rossi play for in 2003?", s, k=3, as_of=as_of)
        assert hits[0].unit.content == "Marco Rossi plays for Torino"


def test_a_named_time_nothing_was_true_in_still_finds_the_texts_told_of_it(mem):
    s = fresh_scope()
    mem.remember("We moved here from Lisbon in 2019.", s, at=d("2024-05-01T10:00:00"), extractor="none")
    mem.remember("The garden needs water.", s, at=d("2024-05-02T10:00:00"), extractor="none")
    # each text is true from when it was told, so none is true in 2019: the texts are searched
    hits = mem.recall("where did we live in 2019?", s, k=2)
    assert "We moved here from Lisbon in 2019." in [h.unit.content for h in hits]
    # a fact says when it is true: none was true then, so none is shown
    facts = fresh_scope()
    mem.remember(
        "Berlin",
        facts,
        facts=[
            Fact(
                subject="Alice",
                predicate="lives_in",
                object="Berlin",
                single_valued=True,
                content="Alice lives in Berlin",
                valid_at=d("2023-04-01"),
            )
        ],
    )
    assert list(mem.recall("where did Alice live in 2019?", facts, k=5)) == []


def test_a_time_most_facts_were_true_in_lifts_none_of_them_above_the_one_asked_about(mem):
    # The question's time word is relative to the as-of point; the unit it asks about began
    # just after that year, while a dozen others were true all through it. Equally near, they
    # share the time list's average rank, not its first: the words still pick the answer.
    s = fresh_scope()
    facts = [
        Fact(
            subject="rose bowl",
            predicate="played_by",
            object="Oregon, Wisconsin",
            single_valued=True,
            content="who played in the rose bowl: Oregon, Wisconsin",
            valid_at=d("2020-01-01"),
        )
    ]
    for n, game in enumerate(
        [
            "sugar bowl",
            "orange bowl",
            "cotton bowl",
            "fiesta bowl",
            "peach bowl",
            "super bowl",
            "citrus bowl",
            "alamo bowl",
            "holiday bowl",
            "sun bowl",
        ]
    ):
        facts.append(
            Fact(
                subject=game,
                predicate="played_by",
                object=f"Team {n}",
                single_valued=True,
                content=f"who played in the {game}: Team {n}",
                valid_at=d("2017-01-01"),
            )
        )
    mem.remember("bowls", s, facts=facts)
    hits = mem.recall("who played in the rose bowl last year", s, k=3, as_of=d("2020-01-02"))
    assert hits.window is not None and hits.window.start == d("2019-01-01")
    assert hits[0].unit.content == "who played in the rose bowl: Oregon, Wisconsin", [h.unit.content for h in hits]
