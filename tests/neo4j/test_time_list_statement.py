"""The Neo4j recall statement reads a time rule that asks for just the request's world range
from the semantic list's index calls (``graphmem.domain.entries.vector_calls``) instead of calls of its
own: random histories of facts and notes, random named times, random as-of points, ranked as
the same statement with every rule making its own calls."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.adapters.neo4j import index as neo4j_index
from graphmem.domain.entries import kind_ranges
from graphmem.domain.models import AsOf, Fact, MemoryKind
from graphmem.domain.timewords import find_window
from graphmem.pipelines.recall import Recaller
from tests.conftest import fresh_scope
from tests.examples import examples

pytestmark = [pytest.mark.neo4j]

NAMES = ["Ines", "Tomas", "Greta", "Omar"]
PLACES = ["Porto", "Lyon", "Graz", "Turin"]
YEARS = st.integers(2001, 2009)
facts = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from(PLACES), YEARS, st.integers(0, 4)), min_size=1, max_size=10
)
notes = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(PLACES), YEARS, st.integers(1, 12)), max_size=6)


def jan(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def own_calls(kinds, world, rules):
    return [[lo, hi, None] for lo, hi in kind_ranges(kinds)], list(rules)


def row(s):
    return s.unit.id, round(s.score, 9)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    facts=facts,
    notes=notes,
    name=st.sampled_from(NAMES),
    year=YEARS,
    as_of=st.one_of(st.none(), YEARS),
    kinds=st.sampled_from([(), ("semantic",), ("episodic", "semantic")]),
)
def test_a_time_rule_read_from_the_semantic_calls_ranks_as_its_own_calls(
    index_mem, facts, notes, name, year, as_of, kinds, monkeypatch
):
    scope = fresh_scope()
    lived = [
        Fact(
            subject=s,
            predicate="lives_in",
            object=o,
            content=f"{s} lives in {o}",
            valid_at=jan(y),
            invalid_at=jan(y + n) if n else None,
        )
        for s, o, y, n in facts
    ]
    index_mem.remember("facts", scope, facts=lived)
    for who, place, y, month in notes:
        index_mem.remember(f"{who} went to {place}.", scope, at=datetime(y, month, 1, tzinfo=UTC), extractor="none")
    at = AsOf(valid=jan(as_of) if as_of else datetime.now(UTC), known=datetime.now(UTC))
    question = f"where did {name} live in {year}?"
    request = Recaller(index_mem.index).request(
        question,
        [scope],
        8,
        at,
        [MemoryKind(k) for k in kinds],
        "hybrid",
        find_window(question, at.valid),
        fixed=as_of is not None,
    )
    shared = [row(s) for s in index_mem.index.recall(request)]
    with monkeypatch.context() as patched:
        patched.setattr(neo4j_index, "vector_calls", own_calls)
        assert shared == [row(s) for s in index_mem.index.recall(request)]
