"""The walk inside the Neo4j recall statement (recall/fused) ranks as its reference,
``graphmem.domain.fusion.walk`` then ``together``, composed of the same server's parts: the fused list
read alone and one ``hop`` statement a hop. Random graphs of facts and mention links, random questions,
random walk settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.domain.fusion import together, walk
from graphmem.domain.models import AsOf, Fact
from graphmem.pipelines.recall import Recaller
from tests.conftest import fresh_scope
from tests.examples import examples

pytestmark = [pytest.mark.neo4j, pytest.mark.compat]

NAMES = ["Ines", "Tomas", "Greta", "Omar", "Priya", "Porto", "Lyon", "Graz"]
PREDICATES = ["mentor_of", "lives_in", "works_with", "visited"]
WORDS = ["flat", "garden", "boat", "piano", "harbour", "market"]

facts = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from(PREDICATES), st.sampled_from(NAMES), st.sampled_from(WORDS)),
    min_size=3,
    max_size=14,
)
#: Free-text notes, each told some multiple of 40 minutes after the facts: chains of them one
#: conversation (less than an hour apart), others apart.
notes = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(WORDS), st.integers(0, 5)), max_size=5)
TOLD = datetime(2024, 5, 1, 9, tzinfo=UTC)


def row(s):
    return s.unit.id, round(s.score, 9), s.hop, s.path


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    facts=facts,
    notes=notes,
    asked=st.lists(st.sampled_from(NAMES + WORDS), min_size=1, max_size=3),
    hops=st.integers(1, 3),
    k=st.integers(1, 8),
    seeds=st.integers(1, 4),
    frontier=st.integers(1, 6),
    fanout=st.sampled_from([2, 50]),
)
def test_the_statement_walks_as_the_reference(index_mem, facts, notes, asked, hops, k, seeds, frontier, fanout):
    scope = fresh_scope()
    index_mem.remember(
        "facts",
        scope,
        at=TOLD,
        facts=[Fact(subject=s, predicate=p, object=o, content=f"{s} {p} {o} {w}") for s, p, o, w in facts if s != o],
    )
    for name, word, later in notes:  # free text: linked by the names it mentions
        index_mem.remember(
            f"{name} likes the {word}.", scope, at=TOLD + timedelta(minutes=40 * later), extractor="none"
        )
    recaller = Recaller(index_mem.index, seeds=seeds, frontier=frontier, fanout=fanout)
    request = recaller.request(" ".join(asked) + "?", [scope], k, AsOf.now(), (), "hybrid", hops=hops)
    # the fused list alone, before any conversation gains: as deep as the walk reads it
    plain = {**request.weights, "conversation": 0.0}
    alone = index_mem.index.recall(
        request.model_copy(update={"hops": 0, "k": request.depth, "keep": request.depth, "weights": plain})
    )
    reference = together(walk(request, alone, index_mem.index.hop), request.weights["conversation"], request.kept)
    assert [row(s) for s in index_mem.index.recall(request)] == [row(s) for s in reference]
