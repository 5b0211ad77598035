"""The rule extractor: the sentence patterns it understands, its documented limits, and that no
episode is ever dropped."""

from __future__ import annotations

from datetime import datetime, time, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.extract.rule import RuleExtractor
from graphmem.models import Episode, MemoryKind, Scope
from tests.factories import EPOCH

ALICE = Scope.parse("user:alice")
PLACES = st.sampled_from(["Berlin", "New York", "Porto", "the Acme Corp", "green tea"])


def extract(text: str):
    return RuleExtractor().extract(Episode(scope=ALICE, occurred_at=EPOCH, raw=text))


def triple(candidate) -> tuple:
    t = candidate.triple
    return (t.subject, t.predicate, t.object, t.single_valued, candidate.retract)


@pytest.mark.parametrize("text, expected", [
    ("I live in Berlin.", ("alice", "lives_in", "Berlin", True, False)),
    ("I moved to Berlin.", ("alice", "lives_in", "Berlin", True, False)),
    ("Bob relocated to Lisbon", ("Bob", "lives_in", "Lisbon", True, False)),
    ("I no longer live in Paris.", ("alice", "lives_in", "Paris", True, True)),
    ("I don't work at Initech anymore.", ("alice", "works_at", "Initech", True, True)),
    ("I started working at Acme.", ("alice", "works_at", "Acme", True, False)),
    ("Alice reports to Bob.", ("Alice", "reports_to", "Bob", True, False)),
    ("My manager is Carol.", ("alice", "reports_to", "Carol", True, False)),
    ("Alice's boss is Carol.", ("Alice", "reports_to", "Carol", True, False)),
    ("My name is Alice Smith.", ("alice", "name", "Alice Smith", True, False)),
    ("Dana is married to Eve.", ("Dana", "married_to", "Eve", True, False)),
    ("I am allergic to peanuts.", ("alice", "allergic_to", "peanuts", False, False)),
    ("Bob loves jazz.", ("Bob", "likes", "jazz", False, False)),
])
def test_each_pattern_gives_its_triple(text: str, expected: tuple) -> None:
    [c] = extract(text)
    assert triple(c) == expected
    assert c.kind is MemoryKind.semantic and c.content == text and c.valid_at == EPOCH and c.scope == ALICE


def test_one_fact_per_sentence_and_the_other_sentences_kept_as_one_episodic_unit() -> None:
    *facts, rest = extract("Hello there! I live in Oslo. The weather is nice. Bob likes chess.")
    assert [triple(c)[:3] for c in facts] == [("alice", "lives_in", "Oslo"), ("Bob", "likes", "chess")]
    assert (rest.kind, rest.triple, rest.content) == (MemoryKind.episodic, None, "Hello there! The weather is nice.")


def test_other_pronouns_are_kept_as_written() -> None:
    [c] = extract("He lives in Rome.")
    assert c.triple.subject == "He"


@given(who=st.sampled_from(["I", "Bob", "Mary Jane"]), where=PLACES)
def test_the_subject_resolves_and_the_object_is_kept(who: str, where: str) -> None:
    [c] = extract(f"{who} lives in {where}.")
    assert c.triple.subject == ("alice" if who == "I" else who)
    assert (c.triple.predicate, c.triple.object) == ("lives_in", where)


@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200)
       .filter(str.strip))
def test_no_episode_is_dropped(text: str) -> None:
    """Any text gives at least one candidate in the episode's scope: facts it matched, else
    the whole episode as one episodic unit."""
    found = extract(text)
    assert found and all(c.scope == ALICE for c in found)
    if all(c.triple is None for c in found):
        assert [(c.kind, c.content) for c in found] == [(MemoryKind.episodic, text)]
    else:
        assert all(c.triple is not None and c.kind is MemoryKind.semantic for c in found)


@pytest.mark.parametrize("text, obj, began", [
    ("I moved to Berlin last month.", "Berlin", "month before"),
    ("I moved to Porto in March 2019.", "Porto", datetime(2019, 3, 1, tzinfo=timezone.utc)),
    ("I have lived in Oslo since 2015.", None, None),  # no pattern: "have lived"
    ("I live in Kyiv since 2018.", "Kyiv", datetime(2018, 1, 1, tzinfo=timezone.utc)),
    ("I started working at Acme yesterday.", "Acme", "day before"),
    ("I live in Rome now.", "Rome", "episode"),  # a time not wholly before the episode
    ("I like tea in the summer.", "tea in the summer", "episode"),  # a habit, not a beginning
])
def test_a_time_the_sentence_names_says_when_a_state_began(text: str, obj, began) -> None:
    [c] = extract(text)
    if obj is None:
        assert c.triple is None
        return
    expected = {"episode": EPOCH, "day before": datetime.combine(EPOCH.date() - timedelta(days=1), time(), timezone.utc),
                "month before": (EPOCH.replace(day=1) - timedelta(days=1)).replace(day=1, hour=0, minute=0, second=0,
                                                                                     microsecond=0)}.get(began, began)
    assert (c.triple.object, c.valid_at, c.content) == (obj, expected, text)
