"""Operator calls on the facade, on every adapter family: retracting a fact, one unit with its
usage, the subjects a database holds, and trace retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.domain.models import Fact, utcnow
from graphmem.errors import InvalidInput, NotFound
from graphmem.settings.config import Settings
from tests.conftest import fresh_scope
from tests.contract.test_temporal_machine import FactsAgain

WHERE = "where does Alice live"


def lives(city: str, valid: str) -> Fact:
    return Fact(
        subject="Alice",
        predicate="lives_in",
        object=city,
        content=f"Alice lives in {city}",
        single_valued=True,
        valid_at=datetime.fromisoformat(valid).replace(tzinfo=UTC),
    )


def where(mem, scope, **at) -> list[str]:
    return [h.unit.content for h in mem.recall(WHERE, scope, **at)]


@pytest.fixture
def moved(mem):
    """Alice lived in Paris from 2020, then in Berlin from 2023 (two episodes)."""
    scope = fresh_scope()
    mem.remember("Paris", scope, facts=[lives("Paris", "2020-01-01")], episode_id=f"{scope.subject_id}:1")
    mem.remember("Berlin", scope, facts=[lives("Berlin", "2023-01-01")], episode_id=f"{scope.subject_id}:2")
    return scope


def test_retract_withdraws_a_fact_through_its_timeline_and_keeps_it_in_history(mem, moved):
    [berlin] = mem.recall(WHERE, moved)
    before = utcnow()
    report = mem.retract(berlin.unit.id, moved, "she never moved: a typo in the form")
    assert report.decisions["DELETE"] == 1
    assert where(mem, moved) == ["Alice lives in Paris"]  # what Berlin had ended holds again
    assert where(mem, moved, known_at=before) == ["Alice lives in Berlin"]  # what was believed then
    [retraction] = [d for d in mem.decisions(moved, op="DELETE")]
    assert retraction.reason.startswith("she never moved: a typo in the form")
    assert (retraction.policy, retraction.episode_id, retraction.event.kind) == ("operator", None, "retract")
    assert retraction.id in {d.id for d in mem.explain(berlin.unit.id, moved)["decisions"]}
    # the operator's word is in no episode's log: re-extracting the episodes does not undo it
    mem.extractors["facts2"] = FactsAgain()
    mem.reextract(moved, "facts2")
    assert where(mem, moved) == ["Alice lives in Paris"]
    # an assertion made afterwards stands
    mem.remember("Berlin again", moved, facts=[lives("Berlin", "2024-01-01")])
    assert where(mem, moved) == ["Alice lives in Berlin"]


def test_retracting_a_withdrawn_fact_changes_nothing(mem, moved):
    [berlin] = mem.recall(WHERE, moved)
    mem.retract(berlin.unit.id, moved, "wrong")
    again = mem.retract(berlin.unit.id, moved, "wrong")
    assert dict(again.decisions) == {"NOOP": 1} and again.unit_ids == []
    assert where(mem, moved) == ["Alice lives in Paris"]


def test_retract_refuses_unknown_units_and_empty_reasons(mem, moved):
    [berlin] = mem.recall(WHERE, moved)
    with pytest.raises(NotFound):
        mem.retract("no-such-unit", moved, "wrong")
    with pytest.raises(NotFound):
        mem.retract(berlin.unit.id, fresh_scope(), "wrong")  # never across scopes
    with pytest.raises(InvalidInput, match="reason"):
        mem.retract(berlin.unit.id, moved, "  ")
    assert where(mem, moved) == ["Alice lives in Berlin"]


def test_a_unit_comes_with_its_usage(mem, moved):
    [berlin] = mem.recall(WHERE, moved)
    mem.recall(WHERE, moved)
    shown = mem.unit(berlin.unit.id, moved)  # counts not yet written are written first
    assert shown["unit"].id == berlin.unit.id and shown["usage"].recall_count == 2
    assert shown["usage"].archived_at is None
    paris = mem.history(moved, entity="Alice")[0]["unit"]
    assert mem.unit(paris.id, moved)["usage"].recall_count == 0  # no usage yet: zeros
    with pytest.raises(NotFound):
        mem.unit(paris.id, fresh_scope())


def test_subjects_count_what_each_subject_holds(mem, moved):
    other = fresh_scope(project="p")
    mem.remember("A note.", other, extractor="none")
    found = {s["scope"]: {k: v for k, v in s.items() if k != "scope"} for s in mem.subjects()}
    assert found[moved] == {"episodes": 2, "units": 2, "decisions": 2}
    assert found[other] == {"episodes": 1, "units": 1, "decisions": 1}


def test_traces_are_pruned_by_age(mem, moved):
    for _ in range(2):
        mem.assemble(WHERE, moved)
    later = utcnow() + timedelta(days=2)
    with pytest.raises(InvalidInput, match="GRAPHMEM_TRACE_RETENTION_DAYS"):
        mem.prune_traces(moved)  # no retention set: traces are kept
    assert mem.prune_traces(moved, older_than_days=3, now=later)["traces"] == 0
    assert mem.prune_traces(moved, older_than_days=1, now=later, dry_run=True)["traces"] == 2
    mem.settings = Settings(trace_retention_days=1)
    assert mem.prune_traces(moved, now=later) == {"traces": 2, "before": later - timedelta(days=1), "dry_run": False}
    assert mem.prune_traces(moved, now=later)["traces"] == 0
