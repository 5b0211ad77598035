"""Relation questions follow their path (issue 40), on every adapter family: "X's R" reaches
what follows the unit that links X to R, even when same-shaped units about other people rank
near it; and the facts of the chain set all do (benchmarks/chains_recall.py, hashing embedder)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
    assert [h.unit.content for h in found[:2]] == ["My manager at Globex is Priya.", "Priya lives in Graz."]
    assert found[1].path == ["My manager at Globex is Priya.", "Priya", "Priya lives in Graz."]


def test_the_chain_set_reaches_every_answer_with_hops_and_not_without(mem):
    chains, sentences = load(DATA)
    scope = fresh_scope()
    told(mem, scope, sentences)
    picked = chains[::4]  # a slice of every shape; the benchmark asks them all
    with_hops = [c["answer"] in [h.unit.content for h in mem.recall(c["question"], scope, k=3, hops=2)] for c in picked]
    without = [c["answer"] in [h.unit.content for h in mem.recall(c["question"], scope, k=3)] for c in picked]
    assert all(with_hops) and sum(with_hops) - sum(without) >= 0.3 * len(picked)
