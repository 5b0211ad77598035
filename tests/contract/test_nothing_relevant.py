"""An honest "nothing known" through the facade, on the in-memory adapters (hashing embedder,
its own fitted model): a question about something the subject never said finds nothing
relevant, and one whose answer is stored finds it relevant, its confidence the highest; assembly
leaves what is not relevant out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.domain.models import Episode
from tests.conftest import fresh_scope

T0 = datetime(2026, 6, 1, tzinfo=UTC)
SAID = [
    "I work at Siemens.",
    "My cat is called Miso.",
    "I live in Graz.",
    "I like jazz.",
    "My manager is Priya.",
    "I play the piano on Sundays.",
]


@pytest.fixture
def told(memory_mem):
    scope = fresh_scope()
    memory_mem.ingest([Episode(scope=scope, occurred_at=T0 + timedelta(minutes=i), raw=t) for i, t in enumerate(SAID)])
    return memory_mem, scope


@pytest.mark.parametrize(
    "question", ["Is Maria allergic to anything?", "Which car do I drive?", "What is the capital of Peru?"]
)
def test_a_question_about_something_absent_finds_nothing_relevant(told, question):
    mem, scope = told
    hits = mem.recall(question, scope)
    assert hits and not hits.relevant  # the closest are still returned, below the threshold
    assert all(h.confidence < hits.threshold for h in hits)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where do I work?", "I work at Siemens."),
        ("What is my cat called?", "My cat is called Miso."),
        ("Who is my manager?", "My manager is Priya."),
    ],
)
def test_a_stored_answer_is_relevant_and_the_most_confident(told, question, answer):
    mem, scope = told
    hits = mem.recall(question, scope)
    assert hits.relevant and hits[0].unit.content == answer
    assert hits[0].confidence >= hits.threshold and all(h.confidence < hits[0].confidence for h in hits[1:])


def test_assembly_leaves_out_what_is_not_relevant(told):
    mem, scope = told
    mem.set_block(scope, "persona", "Prefers short answers.", token_budget=50)
    absent = mem.assemble("Is Maria allergic to anything?", scope)
    assert absent.trace.recalled_ids == () and "Prefers short answers." in absent.text  # blocks stay
    present = mem.assemble("Where do I work?", scope)
    assert [h.unit.content for h in present.hits] == ["I work at Siemens."]
