"""RulePolicy decides from the candidate and its neighbours alone: tables of cases, and
properties searched over candidates and neighbour sets."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from graphmem.domain.models import Candidate, MemoryKind, MemoryUnit, Op, Scope, Triple, WriteContext
from graphmem.policy import PolicyConfig
from graphmem.policy.rule import RulePolicy
from tests.factories import day, episode, unit

ALICE = Scope.parse("user:alice")
POLICY = RulePolicy(PolicyConfig())


def lives(city: str, valid: float | None = None, **kw) -> Candidate:
    return Candidate(
        scope=ALICE,
        content=f"Alice lives in {city}",
        valid_at=day(valid) if valid is not None else None,
        triple=Triple(subject="Alice", predicate="lives_in", object=city),
        **kw,
    )


def stored(city: str, valid: float) -> MemoryUnit:
    return unit(
        ALICE,
        f"Alice lives in {city}",
        created=day(valid),
        valid=day(valid),
        triple=Triple(subject="Alice", predicate="lives_in", object=city),
    )


@pytest.mark.parametrize(
    "candidate, neighbours, op, target",
    [
        (lives("Paris", 1), [], Op.ADD, None),
        (lives("Paris", 5), [stored("Paris", 1)], Op.NOOP, 0),  # the same fact again
        (lives("Berlin", 5), [stored("Paris", 1)], Op.UPDATE, 0),  # one value at a time: supersedes
        (lives("Rome", 0), [stored("Paris", 1)], Op.ADD, 0),  # older than the current value: history bounded by it
        (lives("Paris", op="retract"), [stored("Paris", 1)], Op.DELETE, 0),
        (lives("Oslo", op="retract"), [stored("Paris", 1)], Op.NOOP, None),  # nothing to retract
        (
            Candidate(scope=ALICE, content="I like green tea a lot"),
            [unit(ALICE, "i like green tea a lot!")],
            Op.NOOP,
            0,
        ),
        (Candidate(scope=ALICE, content="I like green tea"), [unit(ALICE, "I like black coffee")], Op.ADD, None),
    ],
)
def test_reconcile_table(candidate, neighbours, op, target):
    decision = POLICY.reconcile(candidate, neighbours)
    assert decision.op is op and decision.reason
    assert decision.target_id == (neighbours[target].id if target is not None else None)
    assert decision.scope == ALICE and decision.policy == "rule"


def test_an_update_ends_the_old_value_when_the_new_one_begins_and_an_older_fact_ends_at_the_current():
    assert POLICY.reconcile(lives("Berlin", 5), [stored("Paris", 1)]).invalid_at == day(5)
    assert POLICY.reconcile(lives("Rome", 0), [stored("Paris", 1)]).invalid_at == day(1)


def test_the_latest_of_several_current_values_is_the_target():
    neighbours = [stored("Paris", 1), stored("Lyon", 3), stored("Nice", 2)]
    assert POLICY.reconcile(lives("Berlin", 5), neighbours).target_id == neighbours[1].id


CITIES = st.sampled_from(["Paris", "Berlin", "Rome", "Oslo"])


@given(
    city=CITIES,
    valid=st.none() | st.integers(0, 3),
    op=st.sampled_from(["assert", "end", "retract"]),
    stored_units=st.lists(
        st.tuples(CITIES, st.none() | st.integers(0, 3), st.integers(0, 1), st.none() | st.integers(0, 3)),
        max_size=5,
    ),
    order=st.randoms(use_true_random=False),
)
# Found in CI: two ended units alike but for when they ended, tied until the end time counted.
@example(
    city="Paris",
    valid=None,
    op="assert",
    stored_units=[("Berlin", None, 1, 0), ("Berlin", None, 1, 1)],
    order=random.Random(0),
)
def test_a_decision_does_not_depend_on_the_order_of_the_neighbours(city, valid, op, stored_units, order):
    # Each adapter (and a bulk load, deciding in memory) gives neighbours in its own order; with
    # ties of valid and stored time, a decision named one unit or another (a helper's run of
    # tests/contract/test_bulk_load.py saw "supersedes 'Oslo'" where record by record said Rome).
    neighbours = [
        unit(
            ALICE,
            f"Alice lives in {c}",
            created=day(created),
            valid=None if v is None else day(v),
            invalid=None if ended is None else day((v or 0) + ended),
            triple=Triple(subject="Alice", predicate="lives_in", object=c),
        )
        for c, v, created, ended in stored_units
    ]
    shuffled = order.sample(neighbours, len(neighbours))
    candidate = lives(city, op=op) if op == "end" else lives(city, valid, op=op)
    one, other = POLICY.reconcile(candidate, neighbours), POLICY.reconcile(candidate, shuffled)
    named = {n.id: (n.content, n.time) for n in neighbours}
    assert (one.op, one.reason, one.invalid_at, named.get(one.target_id or "")) == (
        other.op,
        other.reason,
        other.invalid_at,
        named.get(other.target_id or ""),
    )


@given(
    city=CITIES,
    valid=st.integers(0, 10),
    op=st.sampled_from(["assert", "end", "retract"]),
    stored_cities=st.lists(st.tuples(CITIES, st.integers(0, 10)), max_size=4),
)
def test_every_decision_has_a_reason_and_targets_a_neighbour(city, valid, op, stored_cities):
    neighbours = [stored(c, v) for c, v in stored_cities]
    candidate = lives(city, op=op) if op == "end" else lives(city, valid, op=op)
    decision = POLICY.reconcile(candidate, neighbours)
    assert decision.reason.strip()
    assert decision.target_id is None or decision.target_id in {n.id for n in neighbours}
    if op != "assert":  # an ending ends what shows its value, a retraction withdraws it, or nothing
        known = any(c == city for c, _ in stored_cities)
        assert decision.op is ({"end": Op.UPDATE, "retract": Op.DELETE}[op] if known else Op.NOOP)
    elif any(c == city for c, _ in stored_cities):
        assert decision.op is Op.NOOP  # a value already held is never written twice
    elif neighbours:
        assert decision.op in (Op.UPDATE, Op.ADD) and decision.target_id is not None  # the slot holds one value
    else:
        assert decision.op is Op.ADD and decision.target_id is None


def test_the_gate_holds_procedural_candidates_for_review():
    ctx_episode = episode(ALICE)
    ok, reason = POLICY.should_write(
        Candidate(scope=ALICE, content="Always answer briefly", kind=MemoryKind.procedural),
        WriteContext(episode=ctx_episode),
    )
    assert not ok and "review" in reason
    ok, _ = POLICY.should_write(Candidate(scope=ALICE, content="I like tea"), WriteContext(episode=ctx_episode))
    assert ok


@given(recalled=st.booleans(), age=st.integers(0, 400), expired_ago=st.one_of(st.none(), st.integers(0, 200)))
def test_archive_takes_long_expired_or_old_never_recalled_units(recalled, age, expired_ago):
    now = day(1000)
    u = unit(ALICE, "Alice likes tea", created=now - timedelta(days=age))
    update = {"recall_count": int(recalled), "last_recalled_at": now if recalled else None}
    if expired_ago is not None:
        update["expired_at"] = now - timedelta(days=expired_ago)
    u = u.model_copy(update={"time": u.time.model_copy(update=update)})
    config = POLICY.config
    expected = (expired_ago is not None and expired_ago > config.archive_expired_days) or (
        not recalled and age > config.archive_unrecalled_days
    )
    assert POLICY.should_archive(u, now) is expected


def test_budgets_and_single_valued_predicates_come_from_the_config():
    config = PolicyConfig(budgets={"persona": 50}, default_budget=7, single_valued=frozenset({"plays_for"}))
    policy = RulePolicy(config)
    assert (policy.budget_for("persona"), policy.budget_for("anything")) == (50, 7)
    plays = Candidate(
        scope=ALICE,
        content="Alice plays for Ajax",
        triple=Triple(subject="Alice", predicate="plays_for", object="Ajax"),
    )
    likes = Candidate(
        scope=ALICE, content="Alice likes Ajax", triple=Triple(subject="Alice", predicate="likes", object="Ajax")
    )
    marked = likes.model_copy(update={"triple": likes.triple.model_copy(update={"single_valued": True})})
    assert [policy.is_single_valued(c) for c in (plays, likes, marked)] == [True, False, True]
