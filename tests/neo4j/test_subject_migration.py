"""Migration 0011 on data an earlier graphmem wrote under subjects spelled in other ways (NFD,
surrounding whitespace, a zero-width character): each moves to its normal spelling with every
key derived from it, so search, timelines, entities, re-ingest and erasure work on the normal
subject, and two spellings of one subject are merged and reported."""

from __future__ import annotations

import importlib
import uuid
from datetime import UTC, datetime

import pytest

from graphmem import GraphMem
from graphmem.domain.models import Fact, Scope, SubjectType

pytestmark = pytest.mark.neo4j

normalise_subjects = importlib.import_module("graphmem.adapters.neo4j.migrations.0011_normalise_subjects")


def stored_as(subject_id: str) -> Scope:
    """A scope spelled as an earlier graphmem stored it (today's Scope would normalise it)."""
    return Scope.model_construct(subject_type=SubjectType.user, subject_id=subject_id, project_id=None)


def lives(city: str, year: int) -> Fact:
    return Fact(
        subject="Alice",
        predicate="lives_in",
        object=city,
        content=f"Alice lives in {city}",
        single_valued=True,
        valid_at=datetime(year, 1, 1, tzinfo=UTC),
    )


def contents(mem: GraphMem, subject: str, **options) -> list[str]:
    return sorted(h.unit.content for h in mem.recall("Alice lives chess tea jazz", subject, k=50, **options))


def test_stored_spellings_move_to_the_normal_subject(conn, settings):
    tag = uuid.uuid4().hex[:8]
    jose = f"user:Jos\u00e9-{tag}"
    at = datetime(2024, 1, 1, tzinfo=UTC)
    with GraphMem.connect(settings) as mem:
        # an earlier graphmem wrote these three spellings of one subject as three subjects
        mem.remember(
            "I live in Paris.",
            stored_as(f"Jose\u0301-{tag}"),
            facts=[lives("Paris", 2020)],
            episode_id=f"{tag}-n1",
            at=at,
        )
        mem.set_block(stored_as(f"Jose\u0301-{tag}"), "persona", "Be brief.", token_budget=10)
        mem.remember("I like chess.", stored_as(f" Jos\u00e9-{tag} "), episode_id=f"{tag}-s1", at=at)
        mem.remember(
            "Alice likes tea.",
            jose,
            facts=[Fact(subject="Alice", predicate="likes", object="tea", content="Alice likes tea")],
            at=at,
        )
        mem.set_block(jose, "persona", "Be kind.", token_budget=10)
        mem.remember("I live in Paris.", stored_as(f"bob-{tag}\n"), facts=[lives("Paris", 2020)], at=at)
        mem.remember("I like jazz.", stored_as(f"eve\u200b-{tag}"), at=at)

        notes = normalise_subjects.apply(conn)

        mine = [n for n in notes if tag in n]
        assert len([n for n in mine if "are one subject now" in n]) == 1, notes
        assert any("block 'persona'" in n for n in mine), notes
        assert contents(mem, jose) == ["Alice likes tea", "Alice lives in Paris", "I like chess."]
        assert contents(mem, jose, mode="lexical") == ["Alice likes tea", "Alice lives in Paris", "I like chess."]
        labels = [b.label for b in mem.list_blocks(jose)]
        assert labels[0] == "persona" and labels[1].startswith("persona (") and len(labels) == 2
        assert mem.get_block(jose, "persona").value == "Be kind."  # the normal spelling keeps its label
        about_alice = {e["unit"].content for e in mem.history(jose, entity="Alice")}
        assert about_alice == {"Alice likes tea", "Alice lives in Paris"}  # one entity Alice now
        again = mem.remember(
            "I live in Paris.", f"user: Jose\u0301-{tag}", facts=[lives("Paris", 2020)], episode_id=f"{tag}-n1", at=at
        )
        assert again.new_episodes == 0  # the same episode: stored fingerprints follow the scope

        bob = f"user:bob-{tag}"
        mem.remember("I moved to Berlin.", bob, facts=[lives("Berlin", 2023)])
        assert contents(mem, bob) == ["Alice lives in Berlin"]  # the timeline continues: Paris ended
        assert contents(mem, bob, as_of=datetime(2021, 1, 1, tzinfo=UTC)) == ["Alice lives in Paris"]

        assert contents(mem, f"user:eve<U+200B>-{tag}") == ["I like jazz."]  # kept apart from user:eve-...
        assert contents(mem, f"user:eve-{tag}") == []

        assert [n for n in normalise_subjects.apply(conn) if tag in n] == []  # nothing left to move
        mem.forget(f"user:Jose\u0301-{tag}")
        records, _, _ = conn.driver.execute_query(
            "MATCH (n) WHERE n.subject_id CONTAINS $tag AND n.subject_id STARTS WITH 'Jos' RETURN count(n) AS n",
            tag=tag,
            database_=conn.database,
        )
        assert records[0]["n"] == 0  # forgetting one spelling erased them all
