"""A user's own words are found by their name, on every adapter family: "I moved to Berlin" in
``user:alice`` answers "where does alice live?", while the unit keeps the words as said."""

from __future__ import annotations

import uuid

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.mentions.first_person import as_named
from tests.factories import EPOCH


def test_a_users_first_person_is_found_by_their_name(mem):
    name = f"alice{uuid.uuid4().hex[:8].translate(str.maketrans('0123456789', 'ghijklmnop'))}"
    subject = f"user:{name}"
    mem.remember("I moved to Berlin last month.", subject, at=EPOCH)
    mem.remember("The weather was grey all week.", subject, at=EPOCH)
    found = mem.recall(f"where does {name} live?", subject, k=5)
    assert found.relevant and found[0].unit.content == "I moved to Berlin last month."
    assert found[0].confidence >= found.threshold


def named_user() -> str:
    """A subject whose id reads as a name, new for each test (the Neo4j database is shared)."""
    return f"user:{uuid.uuid4().hex[:10].translate(str.maketrans('0123456789', 'ghijklmnop'))}"


def test_a_question_in_the_first_person_is_read_as_its_users_own(mem):
    """Search reads "I moved to Graz." as the user's name: "where do I live?" too, or the move is
    no nearer the question than someone else's home; and it is as confident as when asked by name."""
    subject = named_user()
    mem.remember("I moved to Graz.", subject, at=EPOCH)
    for other in ("Tom lives in Linz.", "Maria lives in Vienna.", "Lena lives in Berlin."):
        mem.remember(other, subject, at=EPOCH)
    found = mem.recall("Where do I live now?", subject, k=4)
    assert found[0].unit.content == "I moved to Graz."
    by_name = mem.recall(f"Where does {subject.split(':')[1]} live now?", subject, k=4)
    assert found.relevant == by_name.relevant and found[0].confidence >= 0.9 * by_name[0].confidence


def test_my_managers_home_is_reached_when_the_question_says_my(mem):
    """ "Where does my manager live?" is the question about the user's manager, as "Where does
    <name>'s manager live?" is: its answer is first, through "I report to Bob."."""
    subject = named_user()
    for text in ("I report to Bob.", "Bob lives in Lisbon.", "I moved to Berlin.", "Maria lives in Vienna."):
        mem.remember(text, subject, at=EPOCH)
    found = mem.recall("Where does my manager live?", subject, k=3, hops=1)
    assert found[0].unit.content == "Bob lives in Lisbon."
    assert found[0].path[:2] == ["I report to Bob.", "Bob"]


@pytest.mark.parametrize(
    ("subject", "text"),
    [
        ("user:u-7f3a91c2", "I moved to Berlin."),  # an opaque id is no name
        ("agent:alice", "I moved to Berlin."),  # only a user's own words
        ("user:alice", "Bob: I moved to Berlin."),  # Bob's first person
    ],
)
def test_first_person_stays_as_said_where_the_subject_is_not_its_speaker(subject, text):
    kind, _, ident = subject.partition(":")
    assert as_named(text, kind, ident) == text
    assert as_named("I moved to Berlin.", "user", "alice", channel="document") == "I moved to Berlin."  # its author's


FIRST = regex.compile(r"\bI\b|(?i:\b(?:me|my|mine|myself)\b)")


@given(st.text(alphabet=st.sampled_from(list("Iimeyns .,'’:-\n")) | st.characters(), max_size=60))
def test_text_without_a_first_person_word_is_left_as_it_is(text):
    if not FIRST.search(text):
        assert as_named(text, "user", "alice") == text
