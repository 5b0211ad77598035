"""The benchmarks' replay index (benchmarks/_recall.py) answers as the index it replays: a grid
of fusion settings run over it chooses what the real recall would do."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.embed import HashingEmbedder
from graphmem.pipelines.recall import Recaller

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _recall import ListReplay

from tests.examples import examples

SUBJECT = "user:replay"
PEOPLE = ["Ines", "Tomas", "Greta", "Omar"]
PLACES = ["Porto", "Lyon", "Graz", "Cork"]
QUESTIONS = [
    "where did Ines move on 3 March 2024?",
    "who cooks with Tomas?",
    "what did Greta buy in Lyon?",
    "where is the flat of Omar's mentor?",
    "what does Ines think of Porto?",
]


def memory() -> GraphMem:
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
    start = datetime(2024, 3, 1, 9, tzinfo=UTC)
    for n in range(30):
        person, other, place = PEOPLE[n % 4], PEOPLE[(n + 1) % 4], PLACES[n % 3]
        text = [
            f"{person} moved to {place}.",
            f"{person} cooks with {other}.",
            f"{person} bought a lamp in {place}.",
            f"{person}'s mentor is {other}.",
            f"{person}: {other}, I think {place} is lovely.",
        ][n % 5]
        mem.remember(text, SUBJECT, at=start + timedelta(days=n), extractor="none")
    for n in range(60):  # more of what Ines said than one list holds
        mem.remember(f"Ines: the {n}th thing I think of {PLACES[n % 4]} is lovely.", SUBJECT, extractor="none")
    return mem


MEM = memory()
NAMES = ("semantic", "lexical", "entities", "time", "speaker", "paths", "similarity", "conversation")


@settings(max_examples=examples(40), deadline=None)
@given(
    rrf_k=st.integers(1, 60),
    weights=st.tuples(*[st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])] * len(NAMES)),
    hops=st.sampled_from([0, 2]),
    question=st.sampled_from(QUESTIONS),
)
def test_recall_over_the_replay_is_recall_over_the_index(rrf_k, weights, hops, question):
    weights = dict(zip(NAMES, weights))
    scopes = MEM.scopes(SUBJECT, None, False)
    real = Recaller(MEM.index, rrf_k=rrf_k, weights=weights).recall(question, scopes, 10, hops=hops)
    replayed = Recaller(ListReplay(MEM.index), rrf_k=rrf_k, weights=weights).recall(question, scopes, 10, hops=hops)
    assert [(h.unit.id, h.hop, h.path) for h in replayed] == [(h.unit.id, h.hop, h.path) for h in real]
    assert [h.score for h in replayed] == [h.score for h in real]
