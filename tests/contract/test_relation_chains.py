"""Relation questions follow their path (issue 40), on every adapter family: "X's R" reaches
what follows the unit that links X to R, even when same-shaped units about other people rank
near it; and the facts of the chain set all do (benchmarks/chains_recall.py, hashing embedder)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from benchmarks.chains_recall import DATA, load
from graphmem.domain.models import Episode, Scope
from tests.conftest import fresh_scope

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def told(mem, scope, texts) -> None:
    mem.ingest([Episode(scope=scope, occurred_at=T0 + timedelta(minutes=i), raw=t) for i, t in enumerate(texts)])


def test_my_managers_home_is_reached_through_my_manager(mem):
    scope = Scope.parse(f"user:maria{fresh_scope().subject_id}")  # the speaker ("I", "my") is the subject
    told(
        mem,
        scope,
        [
            "I work at Globex.",
            "My manager at Globex is Priya.",
            "Priya lives in Graz.",
            "Quirin's manager is Leopold.",
            "Leopold lives in Riga.",
            "Oda's manager is Jost.",
            "Jost lives in Linz.",
            "I like my manager.",
            "My team meets on Mondays.",
        ],
    )
    question = f"Where does {scope.subject_id.capitalize()}'s manager live?"
    found = mem.recall(question, scope, k=3, hops=2)
    # the answer first, then the bridge that leads to it
    assert [h.unit.content for h in found[:2]] == ["Priya lives in Graz.", "My manager at Globex is Priya."]
    assert found[0].path == ["My manager at Globex is Priya.", "Priya", "Priya lives in Graz."]


def letters() -> str:
    """A fresh name of letters only: read as a person's name (a user's "I" is then searched
    under it, graphmem.domain.mentions.first_person), unique, so no other test's units match it."""
    return uuid.uuid4().hex[:8].translate(str.maketrans("0123456789", "ghijklmnop"))


@pytest.mark.parametrize(
    ("bridge", "question", "answer", "about_x"),
    [
        ("I report to Tobiah.", "manager live", "Tobiah lives in Lisbon.", "I live in Berlin."),
        ("Tobiah is my boss.", "manager live", "Tobiah lives in Lisbon.", "I live in Berlin."),
        ("My supervisor is Tobiah.", "boss live", "Tobiah lives in Lisbon.", "I live in Berlin."),
        ("{x} reports to Tobiah.", "manager live", "Tobiah lives in Lisbon.", "{x} lives in Berlin."),
        ("I am married to Tobiah.", "wife work", "Tobiah works at Initech.", "I work at Globex."),
    ],
)
def test_what_follows_a_bridge_in_other_words_outranks_what_is_told_of_x(mem, bridge, question, answer, about_x):
    # The quickstart's shape: the relation is told in other words than the question's, by X
    # herself; her own home (or job) is the best direct hit, and what the bridge leads to must
    # still come first, then the bridge.
    name = f"ada{letters()}"
    x = name.capitalize()
    scope = Scope.parse(f"user:{name}")
    told(mem, scope, [bridge.format(x=x), answer, about_x.format(x=x)])
    relation, verb = question.split()
    found = mem.recall(f"Where does {x}'s {relation} {verb}?", scope, k=3, hops=1)
    assert [h.unit.content for h in found[:2]] == [answer, bridge.format(x=x)]
    assert found[0].path == [bridge.format(x=x), "Tobiah", answer]
    direct = next(h for h in found if h.unit.content == about_x.format(x=x))
    assert found[0].score > found[1].score > direct.score
    # As sure as an answer to the question asked of the bridge's name: a new user's trial saw
    # the answer first at 4% and a hit about X below it at 21%.
    asked_of_b = mem.recall(f"Where does Tobiah {verb}?", scope, k=3)
    assert found[0].confidence == next(h.confidence for h in asked_of_b if h.unit.content == answer)
    assert found[0].confidence > direct.confidence and found.relevant
    # asked only who X's R is, the bridge is the answer
    assert mem.recall(f"Who is {x}'s {relation}?", scope, k=3, hops=1)[0].unit.content == bridge.format(x=x)


def test_the_chain_set_reaches_every_answer_with_hops_and_not_without(mem):
    chains, sentences = load(DATA)
    scope = fresh_scope()
    told(mem, scope, sentences)
    picked = chains[::4]  # a slice of every shape; the benchmark asks them all
    with_hops = [c["answer"] in [h.unit.content for h in mem.recall(c["question"], scope, k=3, hops=2)] for c in picked]
    without = [c["answer"] in [h.unit.content for h in mem.recall(c["question"], scope, k=3)] for c in picked]
    assert all(with_hops) and sum(with_hops) - sum(without) >= 0.3 * len(picked)


@pytest.mark.parametrize(
    "question",
    [
        "where does {x}'s manager live?",
        "WHERE DOES {X}'S MANAGER LIVE?",
        "Where does {X}'s Manager live?",
        "Where does {X}’s manager live?",
    ],
)
def test_a_relation_question_is_read_in_any_case(mem, question):
    # Found by a new user's trial: "where does alice's manager live?" put her own home first.
    name = f"ada{letters()}"
    scope = Scope.parse(f"user:{name}")
    told(mem, scope, ["I report to Tobiah.", "Tobiah lives in Lisbon.", "I live in Berlin."])
    asked = question.format(x=name, X=name.upper() if question.isupper() else name.capitalize())
    found = mem.recall(asked, scope, k=3, hops=1)
    assert [h.unit.content for h in found[:2]] == ["Tobiah lives in Lisbon.", "I report to Tobiah."]
