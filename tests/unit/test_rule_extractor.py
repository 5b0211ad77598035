"""The rule extractor: the sentence patterns it understands, its documented limits, and that no
episode is ever dropped."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.models import Episode, MemoryKind, Scope
from graphmem.extract.rule import RuleExtractor
from tests.factories import EPOCH

ALICE = Scope.parse("user:alice")
PLACES = st.sampled_from(["Berlin", "New York", "Porto", "the Acme Corp", "green tea"])


def extract(text: str):
    return RuleExtractor().extract(Episode(scope=ALICE, occurred_at=EPOCH, raw=text))


def triple(candidate) -> tuple:
    t = candidate.triple
    return (t.subject, t.predicate, t.object, t.single_valued, candidate.op)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I live in Berlin.", ("alice", "lives_in", "Berlin", True, "assert")),
        ("I moved to Berlin.", ("alice", "lives_in", "Berlin", True, "assert")),
        ("Bob relocated to Lisbon", ("Bob", "lives_in", "Lisbon", True, "assert")),
        ("I no longer live in Paris.", ("alice", "lives_in", "Paris", True, "end")),
        ("I don't work at Initech anymore.", ("alice", "works_at", "Initech", True, "end")),
        ("Actually I never lived in Lyon, I was mistaken.", ("alice", "lives_in", "Lyon", True, "retract")),
        ("That's wrong: I don't live in Paris.", ("alice", "lives_in", "Paris", True, "retract")),
        ("I started working at Acme.", ("alice", "works_at", "Acme", True, "assert")),
        ("Alice reports to Bob.", ("Alice", "reports_to", "Bob", True, "assert")),
        ("My manager is Carol.", ("alice", "reports_to", "Carol", True, "assert")),
        ("Alice's boss is Carol.", ("Alice", "reports_to", "Carol", True, "assert")),
        ("My name is Alice Smith.", ("alice", "name", "Alice Smith", True, "assert")),
        ("Dana is married to Eve.", ("Dana", "married_to", "Eve", True, "assert")),
        ("I am allergic to peanuts.", ("alice", "allergic_to", "peanuts", False, "assert")),
        ("Bob loves jazz.", ("Bob", "likes", "jazz", False, "assert")),
    ],
)
def test_each_pattern_gives_its_triple(text: str, expected: tuple) -> None:
    [c] = extract(text)
    assert triple(c) == expected
    assert c.kind is MemoryKind.semantic and c.content == text and c.scope == ALICE
    # An assertion starts, an ending stops, at the episode's time; a correction has no time.
    assert (c.valid_at, c.invalid_at) == {"assert": (EPOCH, None), "end": (None, EPOCH), "retract": (None, None)}[c.op]


def test_one_fact_per_sentence_and_the_other_sentences_kept_as_one_episodic_unit() -> None:
    *facts, rest = extract("Hello there! I live in Oslo. The weather is nice. Bob likes chess.")
    assert [triple(c)[:3] for c in facts] == [("alice", "lives_in", "Oslo"), ("Bob", "likes", "chess")]
    assert (rest.kind, rest.triple, rest.content) == (MemoryKind.episodic, None, "Hello there! The weather is nice.")


@pytest.mark.parametrize(
    "text, subject",
    [
        ("Carol: I report to Dan.", "Carol"),  # found by a new user's trial: it was alice's manager
        ("Mary Jane: my manager is Dan.", "Mary Jane"),
        ("In My Time: I report to Dan.", "alice"),  # a subtitle, no speaker
    ],
)
def test_a_speakers_first_person_is_the_speaker(text: str, subject: str) -> None:
    [c] = extract(text)
    assert (c.triple.subject, c.triple.predicate, c.triple.object) == (subject, "reports_to", "Dan")


@pytest.mark.parametrize(("text", "me"), [("Bob reports to me.", "alice"), ("Carol: Bob reports to me.", "Carol")])
def test_me_as_the_object_is_the_first_person_too(text: str, me: str) -> None:
    # Found by a new user's trial: "me" was kept as a name, an entity of its own.
    [c] = extract(text)
    assert (c.triple.subject, c.triple.predicate, c.triple.object) == ("Bob", "reports_to", me)


def test_other_pronouns_are_kept_as_written() -> None:
    [c] = extract("He lives in Rome.")
    assert c.triple.subject == "He"


@given(who=st.sampled_from(["I", "Bob", "Mary Jane"]), where=PLACES)
def test_the_subject_resolves_and_the_object_is_kept(who: str, where: str) -> None:
    [c] = extract(f"{who} lives in {where}.")
    assert c.triple.subject == ("alice" if who == "I" else who)
    assert (c.triple.predicate, c.triple.object) == ("lives_in", where)


@given(
    text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200).filter(
        str.strip
    )
)
def test_no_episode_is_dropped(text: str) -> None:
    """Any text gives at least one candidate in the episode's scope: facts it matched, else
    the whole episode as one episodic unit."""
    found = extract(text)
    assert found and all(c.scope == ALICE for c in found)
    if all(c.triple is None for c in found):
        assert [(c.kind, c.content) for c in found] == [(MemoryKind.episodic, text)]
    else:
        assert all(c.triple is not None and c.kind is MemoryKind.semantic for c in found)


@pytest.mark.parametrize(
    "text, obj, began",
    [
        ("I moved to Berlin last month.", "Berlin", "month before"),
        ("I moved to Porto in March 2019.", "Porto", datetime(2019, 3, 1, tzinfo=UTC)),
        ("I have lived in Oslo since 2015.", "Oslo", datetime(2015, 1, 1, tzinfo=UTC)),
        ("I live in Kyiv since 2018.", "Kyiv", datetime(2018, 1, 1, tzinfo=UTC)),
        ("I started working at Acme yesterday.", "Acme", "day before"),
        ("I live in Rome now.", "Rome", "episode"),  # a time not wholly before the episode
        ("I like tea in the summer.", "tea in the summer", "episode"),  # a habit, not a beginning
    ],
)
def test_a_time_the_sentence_names_says_when_a_state_began(text: str, obj, began) -> None:
    [c] = extract(text)
    if obj is None:
        assert c.triple is None
        return
    expected = {
        "episode": EPOCH,
        "day before": datetime.combine(EPOCH.date() - timedelta(days=1), time(), UTC),
        "month before": (EPOCH.replace(day=1) - timedelta(days=1)).replace(
            day=1, hour=0, minute=0, second=0, microsecond=0
        ),
    }.get(began, began)
    assert (c.triple.object, c.valid_at, c.content) == (obj, expected, text)


@pytest.mark.parametrize(
    "text, op, when",
    [
        ("I worked at Acme until March 2024.", "end", datetime(2024, 3, 1, tzinfo=UTC)),
        ("I left Acme yesterday.", "end", "day before"),
        ("I used to live in Oslo.", "end", "episode"),
        ("Since January I no longer live in Graz.", "end", "january"),
        ("I never lived in Lyon.", "retract", None),
    ],
)
def test_an_ending_stops_at_the_time_it_names_and_a_correction_has_none(text: str, op: str, when) -> None:
    [c] = extract(text)
    expected = {
        "episode": EPOCH,
        "day before": datetime.combine(EPOCH.date() - timedelta(days=1), time(), UTC),
        "january": datetime(EPOCH.year, 1, 1, tzinfo=UTC),
    }.get(when, when)
    assert (c.op, c.valid_at, c.invalid_at) == (op, None, expected)


@pytest.mark.parametrize(
    "text",
    [
        "I no longer think jazz is boring.",
        "I left my keys at work.",
        "I quit smoking.",
        "I stopped by the bakery.",
        "I used to think Berlin was grey.",
        "That's wrong, the meeting is on Tuesday.",
        "Actually the train was late.",
    ],
)
def test_words_of_endings_and_corrections_around_no_fact_are_no_fact(text: str) -> None:
    [c] = extract(text)
    assert c.triple is None and c.kind is MemoryKind.episodic


def test_the_labelled_statements_meet_their_targets() -> None:
    """The benchmark's own sets (benchmarks/statement_ops.py): the held-out fifth, written
    apart from the rules, at the targets of issue 40; the rest, which the rules were written
    on, nearly all right."""
    from benchmarks.statement_ops import TARGETS, load, score

    held = score(load("heldout"))
    assert all(held[k] >= v for k, v in TARGETS.items()), held
    dev = score(load("dev"))
    assert dev["precision"] >= 0.98 and dev["recall"] >= 0.98 and dev["time"] >= 0.98, dev
