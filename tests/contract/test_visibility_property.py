"""Property: list_units at random (T, S) equals a pure-Python oracle of the visibility rule
(``graphmem.ports``), for random histories of units and invalidation edges, and so does what
search finds (its entries are derived from the same units and edges) — on every adapter."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.domain.models import AsOf, Op, SearchRequest, UnitFilter, WriteBatch
from tests.conftest import fresh_scope
from tests.examples import examples
from tests.factories import day, decision, invalidation, unit

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)

times = st.integers(min_value=0, max_value=20).map(day)
maybe = lambda s: st.none() | s  # noqa: E731


@st.composite
def histories(draw):
    n_units = draw(st.integers(1, 5))
    units = []
    for i in range(n_units):
        created = draw(times)
        valid = draw(maybe(times))
        invalid = draw(maybe(times))
        if valid and invalid and invalid < valid:
            valid, invalid = invalid, valid
        units.append((f"fact {i}", created, valid, invalid))
    edges = draw(st.lists(st.tuples(st.integers(0, n_units - 1), times, maybe(times)), max_size=5))
    probes = draw(st.lists(st.tuples(times, times), min_size=1, max_size=4))
    return units, edges, probes


def oracle(unit_row, edges, t: datetime, s: datetime):
    """§4 verbatim, plus the unit's own known end. Returns (visible, expired_at, invalid_at)."""
    _, created, valid, own_invalid = unit_row
    seen = [(e, i) for e, i in edges if e <= s]
    visible = (
        created <= s
        and (valid is None or valid <= t)
        and (own_invalid is None or t < own_invalid)
        and not any(i is None or i <= t for _, i in seen)
    )
    expired = min((e for e, _ in seen), default=None)
    ends = [x for x in [own_invalid, *(i for _, i in seen)] if x is not None]
    return visible, expired, min(ends, default=None)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories())
def test_list_units_and_search_match_the_oracle(store_and_index, history):
    store, index = store_and_index
    units_spec, edges_spec, probes = history
    scope = fresh_scope()
    units = [unit(scope, c, created=cr, valid=v, invalid=inv) for c, cr, v, inv in units_spec]
    decisions, invalidations = [], []
    for which, expired, invalid in edges_spec:
        dec = decision(scope, Op.DELETE, target=units[which].id, at=expired)
        decisions.append(dec)
        invalidations.append(invalidation(dec, units[which].id, expired, invalid))
    vectors = dict(zip((u.id for u in units), index.vectors([u.content for u in units])))
    store.commit(
        WriteBatch(
            units=tuple(units),
            decisions=tuple(decisions),
            invalidations=tuple(invalidations),
            vectors=vectors,
            vector_model=index.embedder.name,
        ),
        scope,
    )

    for t, s in probes:
        got = {
            u.id: (u.time.expired_at, u.time.invalid_at)
            for u in store.list_units(scope, UnitFilter(), at=AsOf(valid=t, known=s))
        }
        expected = {}
        for i, spec in enumerate(units_spec):
            edges = [(e, inv) for j, e, inv in edges_spec if j == i]
            visible, expired, invalid = oracle(spec, edges, t, s)
            if visible:
                expected[units[i].id] = (expired, invalid)
        assert got == expected, (t, s)
        # search filters by the same rule, through the entries derived from units and edges
        request = SearchRequest(
            scopes=(scope,), at=AsOf(valid=t, known=s), k=50, fetch=50, vector=index.vectors(["fact"])[0]
        )
        assert {hit.unit.id for hit in index.recall(request)} == set(expected), (t, s)
