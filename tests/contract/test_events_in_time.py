"""What happened in the asked time comes first (issue 40), on every adapter family: in a
subject of weeks of diary-like episodes and open-ended facts, a question naming a time ranks
the events of that time above states that merely hold then; a question about a state then
still finds the state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import fresh_scope

NOW = datetime(2026, 12, 3, 12, tzinfo=UTC)
FACTS = [
    "Maria works at Initech.",
    "Maria lives in Vienna.",
    "I live in Graz.",
    "My cat is called Miso.",
    "I like jazz.",
    "Tom works at Globex.",
    "My dog is called Rex.",
    "Maria likes tennis.",
    "Maria has a parrot called Kiwi.",
    "I work at Nokia.",
]
ROUTINE = ["Had lunch with Tom at the cafe.", "Went for a run in the park.", "Bought groceries at the market."]


@pytest.fixture
def diary(mem):
    """Four weeks of routine (near-identical every day), a few dated events, and open-ended
    facts told in 2019."""
    scope = fresh_scope()
    for i, text in enumerate(FACTS):
        mem.remember(text, scope, at=datetime(2019, 1 + i, 1, tzinfo=UTC))
    for day in range(28):
        when = datetime(2026, 11, 5, 19, tzinfo=UTC) + timedelta(days=day)
        mem.remember(ROUTINE[day % 3], scope, at=when)
    events = {
        "Maria went skiing with her sister.": "2026-11-08",
        "Maria visited the museum.": "2026-11-14",
        "Maria cooked dinner for us.": "2026-11-21",
        "Maria bought a new bike.": "2026-11-27",
        "Went to the cinema with Tom.": "2026-11-25",
        "Fixed the kitchen sink.": "2026-12-02",
    }
    for text, day in events.items():
        mem.remember(text, scope, at=datetime.fromisoformat(day).replace(hour=20, tzinfo=UTC))
    return scope


def test_what_happened_yesterday_is_first(mem, diary):
    [first, *_] = mem.recall("What happened yesterday?", diary, as_of=NOW)
    assert first.unit.time.valid_at.date().isoformat() == "2026-12-02"


def test_what_someone_did_in_a_month_is_above_what_holds_all_month(mem, diary):
    hits = mem.recall("What did Maria do in November 2026?", diary, k=8, as_of=NOW)
    found = [h.unit.content for h in hits]
    for event in (
        "Maria went skiing with her sister.",
        "Maria visited the museum.",
        "Maria cooked dinner for us.",
        "Maria bought a new bike.",
    ):
        assert event in found, found
    assert not any(f in found[:4] for f in FACTS)


def test_what_i_did_last_week_is_that_week(mem, diary):
    hits = mem.recall("What did I do last week?", diary, as_of=NOW)
    week = (datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC))
    assert all(week[0] <= h.unit.time.valid_at < week[1] for h in hits[:7])


def test_a_state_then_is_still_the_state(mem, diary):
    [first, *_] = mem.recall("Where did I live in March 2020?", diary)
    assert first.unit.content == "I live in Graz."
