"""The conversation a hit was told in: a recall's best hits told close together gain together
(``graphmem.domain.fusion.together``), checked against a reference over every pair of hits."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.domain.fusion import CONVERSATION_GAP, together
from graphmem.domain.models import Scope, Scored, SourceRef
from tests.examples import examples
from tests.factories import EPOCH, unit

S = Scope.parse("user:conversations")


def told(n: int, minutes: float | None, score: float) -> Scored:
    u = unit(S, f"turn {n}")
    at = None if minutes is None else EPOCH + timedelta(minutes=minutes)
    u = u.model_copy(
        update={
            "id": f"u{n:03d}",
            "source": SourceRef(episode_id=f"e{n}", channel="chat", extractor_version="test-1", occurred_at=at),
        }
    )
    return Scored(unit=u, score=score)


def reference(found: list[Scored], weight: float, k: int) -> list[tuple[str, float]]:
    """Conversations as the components of "told less than the gap apart", over every pair."""
    group = list(range(len(found)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, a in enumerate(found):
        for j, b in enumerate(found):
            ta, tb = a.unit.source.occurred_at, b.unit.source.occurred_at
            if ta and tb and abs(ta - tb) < CONVERSATION_GAP:
                group[root(i)] = root(j)
    others = [
        sum(1 for j in range(len(found)) if root(j) == root(i)) - 1 if found[i].unit.source.occurred_at else 0
        for i in range(len(found))
    ]
    scored = [(s.unit.id, s.score + weight * o) for s, o in zip(found, others)]
    return sorted(scored, key=lambda p: (-p[1], p[0]))[:k]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 600)), st.floats(0, 3, allow_nan=False)), max_size=20),
    st.sampled_from([0.0, 0.05, 1.0]),
    st.integers(1, 12),
)
def test_each_hit_gains_the_weight_for_every_other_told_in_its_conversation(rows, weight, k):
    found = [told(n, minutes, score) for n, (minutes, score) in enumerate(rows)]
    got = together(found, weight, k)
    assert [(s.unit.id, s.score) for s in got] == reference(found, weight, k)


def test_a_conversation_is_a_chain_of_turns_each_less_than_the_gap_after_the_last():
    gap = CONVERSATION_GAP.total_seconds() / 60
    chain = [told(0, 0, 1.0), told(1, gap - 1, 1.0), told(2, 2 * gap - 2, 1.0), told(3, 4 * gap, 1.08)]
    # the three chained turns (first and last further apart than the gap) gain 2 x 0.05 each
    assert [s.unit.id for s in together(chain, 0.05, 4)] == ["u000", "u001", "u002", "u003"]
    assert [round(s.score, 6) for s in together(chain, 0.05, 4)] == [1.1, 1.1, 1.1, 1.08]


def test_hits_all_told_at_once_keep_their_order():
    # one document or one import: every hit gains alike
    found = [told(n, 5, 2.0 - n / 10) for n in range(6)]
    assert [s.unit.id for s in together(found, 0.05, 3)] == ["u000", "u001", "u002"]
