"""The MemoryStore contract, run against every adapter (in-memory and Neo4j)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.domain.models import (
    STORED,
    Appended,
    AsOf,
    Decision,
    Fact,
    MemoryKind,
    MemoryUnit,
    Op,
    Page,
    RecallStats,
    TimelineEvent,
    Triple,
    UnitFilter,
    WriteBatch,
)
from graphmem.errors import Conflict, NotFound
from tests.conftest import fresh_scope
from tests.examples import examples
from tests.factories import day, decision, episode, invalidation, unit

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)


def at(valid: float, known: float) -> AsOf:
    return AsOf(valid=day(valid), known=day(known))


def put(store, u: MemoryUnit) -> None:
    """Store one unit as a write does: in a committed batch."""
    store.commit(WriteBatch(units=(u,)), u.scope)


def test_episode_is_append_only(store, scope):
    ep = episode(scope, "I moved to Berlin", id=f"ep-{scope.subject_id}")
    assert store.put_episodes([ep]) == Appended(new=1)
    assert store.put_episodes([ep]) == Appended(new=0)  # same id, same content: no-op
    assert store.put_episodes([episode(scope, "I moved to Paris", id=ep.id)]) == Appended(conflicts=(0,))
    assert store.get_episode(ep.id, scope).raw == "I moved to Berlin"
    assert store.get_episode(ep.id, fresh_scope()) is None  # never across scopes


def test_an_episode_reads_back_with_the_fact_names_it_was_stored_with(store, scope):
    # A store written before fact names refused zero-width characters may hold one: its
    # episodes must still read (to show, export, delete), as they were stored.
    old = Fact.model_validate({"subject": "Ali\u200bce", "predicate": "lives_in", "object": "Paris"}, context=STORED)
    ep = episode(scope, "Alice lives in Paris").model_copy(update={"facts": (old,)})
    assert store.put_episodes([ep]) == Appended(new=1)
    assert store.get_episode(ep.id, scope).facts == (old,)


def test_episode_ids_belong_to_their_subject(store):
    alice, bob = fresh_scope(), fresh_scope()
    shared_id = f"ep-{alice.subject_id}"
    assert store.put_episodes([episode(alice, "Alice moved to Berlin", id=shared_id)]) == Appended(new=1)
    assert store.put_episodes([episode(bob, "Bob likes chess", id=shared_id)]) == Appended(new=1)  # another subject
    assert store.get_episode(shared_id, alice).raw == "Alice moved to Berlin"
    assert store.get_episode(shared_id, bob).raw == "Bob likes chess"


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    writes=st.lists(
        st.lists(st.tuples(st.integers(0, 1), st.integers(0, 2), st.sampled_from("ab")), max_size=6),
        min_size=1,
        max_size=3,
    )
)
def test_put_episodes_reports_conflicts_and_stores_the_rest(store, writes):
    """Batches of episodes (scope, id, text) drawn from a few of each: the first text under a
    (scope, id) is stored; a later other text there is reported by its position, alone."""
    scopes = [fresh_scope(), fresh_scope()]
    stored: dict[tuple[int, int], str] = {}
    for batch in writes:
        episodes = [episode(scopes[s], text, id=f"e{i}") for s, i, text in batch]
        expected_conflicts, new = [], 0
        for position, (s, i, text) in enumerate(batch):
            if (s, i) not in stored:
                stored[(s, i)] = text
                new += 1
            elif stored[(s, i)] != text:
                expected_conflicts.append(position)
        assert store.put_episodes(episodes) == Appended(new=new, conflicts=tuple(expected_conflicts))
    for (s, i), text in stored.items():
        assert store.get_episode(f"e{i}", scopes[s]).raw == text


def test_unit_written_once(store, scope):
    u = unit(scope, "Alice likes tea")
    put(store, u)
    with pytest.raises(Conflict):
        put(store, u.model_copy(update={"content": "Alice likes coffee"}))
    assert store.get_unit(u.id, scope).content == "Alice likes tea"


def made(scope, u: MemoryUnit) -> Decision:
    return decision(scope, Op.ADD).model_copy(update={"produced_id": u.id})


def test_a_staged_batch_commits_what_it_holds_and_a_copy_with_other_records_is_shaped_again(store, scope):
    """``stage`` shapes a commit ahead of it (a write stages the next batch while one commits).
    A copy of the staged batch with other units and decisions commits those, not what was
    staged; the staged batch itself then commits its own."""
    first, other = unit(scope, "Alice likes tea"), unit(scope, "Alice likes coffee")
    staged = store.stage(WriteBatch(units=(first,), decisions=(made(scope, first),)), scope)
    store.commit(staged.model_copy(update={"units": (other,), "decisions": (made(scope, other),)}), scope)
    assert [u.content for u in store.list_units(scope, UnitFilter())] == ["Alice likes coffee"]
    store.commit(staged, scope)
    assert sorted(u.content for u in store.list_units(scope, UnitFilter())) == ["Alice likes coffee", "Alice likes tea"]
    assert {d.produced_id for d in store.list_decisions(scope)} == {first.id, other.id}


def test_invalidation_is_an_edge_and_visibility_follows_both_axes(store, scope):
    old = unit(scope, "Alice lives in Paris", created=day(0), valid=day(0))
    new = unit(scope, "Alice lives in Berlin", created=day(10), valid=day(5))
    put(store, old)
    dec = decision(scope, Op.UPDATE, target=old.id, at=day(10)).model_copy(update={"produced_id": new.id})
    store.commit(
        WriteBatch(units=(new,), decisions=(dec,), invalidations=(invalidation(dec, old.id, day(10), day(5)),)),
        scope,
    )

    def visible(t: float, s: float) -> set[str]:
        return {u.content for u in store.list_units(scope, UnitFilter(), at=at(t, s))}

    assert visible(20, 20) == {"Alice lives in Berlin"}
    assert visible(3, 20) == {"Alice lives in Paris"}  # as-of before the move
    assert visible(20, 9) == {"Alice lives in Paris"}  # what we believed before learning it
    seen_now = store.get_unit(old.id, scope)
    assert (seen_now.time.expired_at, seen_now.time.invalid_at) == (day(10), day(5))
    seen_before = store.get_unit(old.id, scope, at(3, 9))
    assert seen_before.time.expired_at is None and seen_before.time.invalid_at is None
    assert seen_before.content == "Alice lives in Paris"  # the node itself never changed


def test_retraction_hides_the_fact_at_every_world_time(store, scope):
    u = unit(scope, "Bob is allergic to nuts", created=day(0), valid=day(0))
    put(store, u)
    dec = decision(scope, Op.DELETE, target=u.id, at=day(4))
    store.commit(WriteBatch(decisions=(dec,), invalidations=(invalidation(dec, u.id, day(4), None),)), scope)
    assert store.list_units(scope, UnitFilter(), at=at(1, 5)) == []
    assert [x.id for x in store.list_units(scope, UnitFilter(), at=at(1, 3))] == [u.id]


def test_known_end_is_part_of_the_unit(store, scope):
    put(store, unit(scope, "Lease runs until day 30", created=day(0), valid=day(0), invalid=day(30)))
    assert len(store.list_units(scope, UnitFilter(), at=at(29, 40))) == 1
    assert store.list_units(scope, UnitFilter(), at=at(30, 40)) == []


def test_scope_isolation_and_filters(store):
    alice, bob = fresh_scope(), fresh_scope()
    shared = fresh_scope("shared")
    for s in (alice, bob, shared):
        put(store, unit(s, "The office is in Lisbon", labels=("work",)))
    put(store, unit(alice, "Rule: answer briefly", kind=MemoryKind.procedural))
    assert [u.scope for u in store.list_units(alice, UnitFilter())] == [alice, alice]
    assert len(store.list_units(alice, UnitFilter(kind=MemoryKind.procedural))) == 1
    assert len(store.list_units(alice, UnitFilter(labels=("work",)))) == 1
    bob_unit = store.list_units(bob, UnitFilter())[0]
    assert store.get_unit(bob_unit.id, alice) is None
    assert store.list_units(alice, UnitFilter(ids=(bob_unit.id,))) == []
    assert store.record_recall(alice, {bob_unit.id: RecallStats(recalled_at=day(1))}) == 0
    assert store.get_unit(bob_unit.id, bob).time.recall_count == 0  # nothing recorded through alice
    assert store.set_archived(alice, [bob_unit.id], day(1)) == 0 and store.archived_ids(bob) == set()


def test_cross_scope_invalidation_is_refused(store):
    alice, bob = fresh_scope(), fresh_scope()
    target = unit(bob, "Bob's fact")
    put(store, target)
    dec = decision(alice, Op.DELETE, target=target.id)
    with pytest.raises(NotFound):
        store.commit(WriteBatch(decisions=(dec,), invalidations=(invalidation(dec, target.id, day(1), None),)), alice)
    assert len(store.list_units(bob, UnitFilter())) == 1


def test_filters_by_hash_and_slot_and_paging(store, scope):
    triple = Triple(subject="Alice", predicate="lives_in", object="Paris", single_valued=True)
    a = unit(scope, "Alice lives in Paris", triple=triple, created=day(1))
    b = unit(scope, "Alice likes jazz", created=day(2))
    put(store, a)
    put(store, b)
    assert [u.id for u in store.list_units(scope, UnitFilter(content_hashes=(b.content_hash,)))] == [b.id]
    found = store.list_units(scope, UnitFilter(slots=(triple.slot(scope),)))
    assert [u.id for u in found] == [a.id] and found[0].triple == triple
    assert [u.id for u in store.list_units(scope, UnitFilter(), Page(offset=1, limit=1))] == [b.id]


def test_recall_stats_add_up_beside_the_unit(store, scope):
    u = unit(scope, "Alice likes tea")
    put(store, u)
    assert (
        store.record_recall(
            scope, {u.id: RecallStats(recalled_at=day(3)), "no-such-unit": RecallStats(recalled_at=day(3))}
        )
        == 1
    )  # ids not stored are skipped
    assert store.record_recall(scope, {u.id: RecallStats(recalled_at=day(2), increment=2)}) == 1
    seen = store.get_unit(u.id, scope)
    assert (seen.time.recall_count, seen.time.last_recalled_at) == (3, day(3))  # the latest recall is kept
    assert seen.content == u.content and seen.time.created_at == u.time.created_at


def logged(scope, group: str, content: str) -> tuple[MemoryUnit, Decision]:
    """A unit and the ADD decision that puts it into ``group``'s log, as a write plans them."""
    u = unit(scope, content)
    event = TimelineEvent(kind="assert", group=group, single=True, value=content, order_at=day(0))
    return u, decision(scope, Op.ADD).model_copy(update={"produced_id": u.id, "event": event})


def log_length(store, scope, group: str) -> int:
    return len(store.group_state(scope, [group])[0])


def test_guards_detect_a_concurrent_writer(store, scope):
    group = f"slot:{scope.subject_id}"
    read = log_length(store, scope, group)  # two writers read the group's log...
    first, d1 = logged(scope, group, "first")
    store.commit(WriteBatch(units=(first,), decisions=(d1,), guards={group: read}), scope)
    second, d2 = logged(scope, group, "second")
    with pytest.raises(Conflict):  # ...and the second to commit finds it changed
        store.commit(WriteBatch(units=(second,), decisions=(d2,), guards={group: read}), scope)
    assert [u.content for u in store.list_units(scope, UnitFilter())] == ["first"]  # all or nothing
    store.commit(WriteBatch(units=(second,), decisions=(d2,), guards={group: log_length(store, scope, group)}), scope)
    # A guard on another group, or a write that adds nothing to a guarded group, passes.
    third = unit(scope, "third")
    store.commit(WriteBatch(units=(third,), guards={group: 2, "slot:other": 0}), scope)
    store.commit(WriteBatch(units=(unit(scope, "fourth"),), guards={group: 2}), scope)


def test_an_episode_is_undecided_until_the_commit_that_decides_it(store):
    alice, bob, carol = fresh_scope(), fresh_scope(), fresh_scope()
    first = [episode(alice, f"Alice note {i}", id=f"a{i}") for i in range(3)]
    assert store.put_episodes(first) == Appended(new=3)
    store.put_episodes([episode(bob, "Bob note", id="b0")])
    store.put_episodes([first[0], episode(alice, "Alice again", id="a3")])  # a0 is not new: still its first write's
    assert (store.undecided_count([alice]), store.undecided_count([alice, bob]), store.undecided_count([carol])) == (
        4,
        5,
        0,
    )
    assert store.undecided_count() >= 5
    writes = store.undecided_episodes(alice)
    assert [[e.id for e in w] for w in writes] == [["a0", "a1", "a2"], ["a3"]]  # by write, in the order given
    assert (writes[0][1].raw, writes[0][1].scope, writes[0][1].occurred_at) == (
        "Alice note 1",
        alice,
        first[1].occurred_at,
    )
    assert store.undecided_episodes(alice, limit=1) == writes[:1]
    store.commit(WriteBatch(decided=("a1", "b0")), alice)  # b0 is bob's: not decided in alice's scope
    assert [[e.id for e in w] for w in store.undecided_episodes(alice)] == [["a0", "a2"], ["a3"]]
    assert store.undecided_count([bob]) == 1
    # An import's episodes come with their decisions: never undecided.
    store.load(carol, {"episode": [episode(carol, "Carol note", id="c0")]})
    assert store.undecided_count([carol]) == 0 and store.undecided_episodes(carol) == []
