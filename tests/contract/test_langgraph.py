"""``graphmem.integrations.langgraph.GraphMemStore``, LangGraph's ``BaseStore`` over the facade, on
both adapters: random sequences of puts, deletes, batches, gets, listings and searches against a
reference model (a dict per namespace); query search; the async methods; refusals; what history
keeps; and a real LangGraph graph whose nodes write and read memories through it."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

pytest.importorskip("langgraph")

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from graphmem.domain.models import UnitStatus
from graphmem.errors import InvalidInput
from graphmem.integrations.langgraph import GraphMemStore
from tests.examples import examples

NAMESPACES = [("docs",), ("docs", "a"), ("docs", "b"), ("users", "a"), ("users", "a", "v1")]
#: Keys that one normalised name would merge ("K" and "k", "k " and "k"): each is its own item.
KEYS = ["k", "K", "k ", "Ärger"]
NAMESPACE, KEY = st.sampled_from(NAMESPACES), st.sampled_from(KEYS)
VALUES = st.fixed_dictionaries(
    {"n": st.integers(0, 3)},
    optional={"text": st.sampled_from(["tea", "chess", "Paris"]), "tags": st.lists(st.sampled_from("xy"), max_size=2)},
)


def store_of(mem) -> GraphMemStore:
    """A store of its own project, so tests on the shared Neo4j never see each other's items."""
    return GraphMemStore(mem, project=f"lg{uuid.uuid4().hex[:10]}")


Model = dict[tuple[str, ...], dict[str, dict[str, Any]]]


def listed(model: Model, prefix: tuple[str, ...] = (), wanted: dict[str, Any] | None = None) -> set:
    return {
        (namespace, key, repr(value))
        for namespace, items in model.items()
        if namespace[: len(prefix)] == prefix
        for key, value in items.items()
        if all(value.get(k) == v for k, v in (wanted or {}).items())
    }


def shown(items) -> set:
    return {(tuple(i.namespace), i.key, repr(i.value)) for i in items}


def test_store_matches_a_dict_of_namespaces(mem):
    """After any sequence of puts (alone or batched, last one per key winning), deletes and
    re-puts, every get, listing, namespace listing and filtered page is the model's."""

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.store = store_of(mem)
            self.model: Model = {}

        def _apply(self, namespace, key, value) -> None:
            if value is None:
                self.model.get(namespace, {}).pop(key, None)
            else:
                self.model.setdefault(namespace, {})[key] = value

        @rule(namespace=NAMESPACE, key=KEY, value=VALUES)
        def put(self, namespace, key, value):
            self.store.put(namespace, key, value)
            self._apply(namespace, key, value)

        @rule(namespace=NAMESPACE, key=KEY)
        def delete(self, namespace, key):
            self.store.delete(namespace, key)
            self._apply(namespace, key, None)

        @rule(
            puts=st.lists(
                st.tuples(NAMESPACE, KEY, st.none() | VALUES),
                min_size=1,
                max_size=4,
            ),
            probe=st.tuples(NAMESPACE, KEY),
        )
        def batch(self, puts, probe):
            """Reads in a batch see the memory as it was before the batch's puts."""
            before = self.model.get(probe[0], {}).get(probe[1])
            ops = [PutOp(n, k, v) for n, k, v in puts]
            results = self.store.batch([*ops, GetOp(*probe)])
            got = results[-1]
            assert (got.value if got else None) == before
            for n, k, v in puts:
                self._apply(n, k, v)

        @rule(namespace=NAMESPACE, key=KEY)
        def get(self, namespace, key):
            item = self.store.get(namespace, key)
            expected = self.model.get(namespace, {}).get(key)
            assert (item.value if item else None) == expected
            if item is not None:
                assert (tuple(item.namespace), item.key) == (namespace, key)
                assert item.created_at <= item.updated_at

        @rule(prefix=st.sampled_from([(), ("docs",), ("users", "a"), ("nothing",)]), n=st.none() | st.integers(0, 3))
        def search(self, prefix, n):
            wanted = None if n is None else {"n": n}
            found = self.store.search(prefix, filter=wanted, limit=100)
            assert shown(found) == listed(self.model, prefix, wanted)
            times = [i.updated_at for i in found]
            assert times == sorted(times, reverse=True)  # newest first
            offset, limit = 1, 2
            page = self.store.search(prefix, filter=wanted, offset=offset, limit=limit)
            assert [(i.namespace, i.key) for i in page] == [
                (i.namespace, i.key) for i in found[offset : offset + limit]
            ]

        @rule(
            condition=st.none()
            | st.builds(
                MatchCondition,
                match_type=st.sampled_from(["prefix", "suffix"]),
                path=st.sampled_from([("docs",), ("*", "a"), ("a",), ("users", "*", "v1")]),
            ),
            depth=st.none() | st.integers(1, 2),
        )
        def namespaces(self, condition, depth):
            held = [n for n, items in self.model.items() if items]
            if condition is not None:
                held = [n for n in held if _match(condition, n)]
            if depth is not None:
                held = [n[:depth] for n in held]
            conditions = (condition,) if condition else None
            assert self.store.batch([ListNamespacesOp(conditions, depth, limit=100)])[0] == sorted(set(held))

        @invariant()
        def namespaces_listed_are_those_holding_items(self):
            assert self.store.list_namespaces(limit=100) == sorted(n for n, items in self.model.items() if items)

    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=examples(40),
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )


def _match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p in ("*", n) for n, p in pairs)


def test_query_search_ranks_what_matches_and_skips_unindexed_items(mem):
    store = store_of(mem)
    store.put(("memories", "alice"), "drink", {"text": "Alice drinks green tea every morning"})
    store.put(("memories", "alice"), "city", {"text": "Alice lives in Lisbon"})
    store.put(("memories", "bob"), "game", {"text": "Bob plays chess on Sundays"})
    store.put(("memories", "alice"), "secret", {"text": "green tea is her password"}, index=False)
    store.put(("memories", "alice"), "titled", {"title": "chess club", "body": "tea"}, index=["title"])

    found = store.search(("memories",), query="green tea", limit=10)
    assert found[0].key == "drink"
    assert "secret" not in {i.key for i in found}  # index=False: out of query searches
    assert all(a.score >= b.score for a, b in zip(found, found[1:]))
    chess = store.search(("memories",), query="chess", limit=10)
    assert {"game", "titled"} <= {i.key for i in chess[:2]}  # the title is indexed, not the body
    assert [i.key for i in store.search(("memories", "bob"), query="green tea")] in ([], ["game"])
    assert store.search(("memories",), query="chess", filter={"title": "chess club"})[0].key == "titled"
    # a listing without a query still shows the unindexed item
    assert "secret" in {i.key for i in store.search(("memories", "alice"), limit=10)}


def test_an_update_keeps_created_at_and_history_keeps_every_value(mem):
    store = store_of(mem)
    ns = ("memories", "carol")
    store.put(ns, "home", {"city": "Oslo"})
    first = store.get(ns, "home")
    store.put(ns, "home", {"city": "Oslo"})  # the same value: nothing changes
    assert store.get(ns, "home") == first
    store.put(ns, "home", {"city": "Rome"})
    second = store.get(ns, "home")
    assert second.created_at == first.created_at < second.updated_at
    store.delete(ns, "home")
    assert store.get(ns, "home") is None

    subject = f"user:{'.'.join(ns)}"
    ended = mem.units(subject, project=store.project, status=UnitStatus.ended).units
    assert {u.content for u in ended} == {'{"city": "Oslo"}', '{"city": "Rome"}'}
    reasons = [d.reason for d in mem.decisions(subject, project=store.project)]
    assert len(reasons) == 3 and all(reasons)  # added, replaced, ended: each says why
    then = mem.units(subject, project=store.project, as_of=second.updated_at).units  # true then, known now
    assert [u.content for u in then] == ['{"city": "Rome"}']


def test_async_methods_do_what_the_sync_ones_do(mem):
    store = store_of(mem)

    async def scenario():
        await store.aput(("a", "b"), "k", {"v": 1})
        await store.aput(("a", "c"), "k", {"v": 2})
        assert (await store.aget(("a", "b"), "k")).value == {"v": 1}
        assert {i.value["v"] for i in await store.asearch(("a",))} == {1, 2}
        assert await store.alist_namespaces(prefix=("a",), max_depth=1) == [("a",)]
        assert await store.alist_namespaces(suffix=("c",)) == [("a", "c")]
        await store.adelete(("a", "b"), "k")
        results = await store.abatch([GetOp(("a", "b"), "k"), SearchOp(("a",), limit=1, offset=0)])
        assert results[0] is None and [i.value for i in results[1]] == [{"v": 2}]

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "namespace",
    [(), ("a.b",), ("",), (" a",), ("a", "Cafe\u0301"), ("x" * 201,), ("a\u200bb",)],
    ids=["empty", "dot", "blank", "whitespace", "not-nfc", "too-long", "invisible"],
)
def test_namespaces_no_subject_can_hold_are_refused(memory_mem, namespace):
    store = store_of(memory_mem)
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(namespace, "k", {"v": 1})])
    assert store.batch([GetOp(namespace, "k")]) == [None]  # nothing is there to read


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("list", ["a"], "not a dict"),
        ("object", {"o": object()}, "not JSON serializable"),
        ("nan", {"f": float("nan")}, "not JSON compliant"),
        ("huge", {"t": "x" * 300_000}, "over the 200000 limit"),
        ("k" * 1_000_000, {"v": 1}, "over the 200000 limit"),
    ],
    ids=["list", "object", "nan", "huge-value", "huge-key"],
)
def test_values_graphmem_cannot_hold_are_refused_in_one_line_and_nothing_is_written(memory_mem, key, value, says):
    store = store_of(memory_mem)
    with pytest.raises(InvalidInput) as refused:
        store.batch([PutOp(("a",), "fine", {"v": 1}), PutOp(("a",), key, value)])
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert store.list_namespaces() == []  # the batch's other put is not written either


def test_ttl_is_refused_and_unusual_keys_are_kept_apart(memory_mem):
    store = store_of(memory_mem)
    with pytest.raises(NotImplementedError):
        store.put(("a",), "k", {"v": 1}, ttl=5)
    keys = ["k", "K", " k", "k\u200b", "\u200b", "x" * 600, "a#b", "k #0123456789abcdef"]
    for n, key in enumerate(keys):
        store.put(("a",), key, {"v": n})
    assert {key: store.get(("a",), key).value["v"] for key in keys} == {key: n for n, key in enumerate(keys)}


def test_a_langgraph_graph_writes_and_reads_memories_through_the_store(mem):
    """A graph whose one node recalls what it knows about the user, then stores what they said;
    a second conversation (another thread) answers from the first one's memory."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        user: str
        said: str
        recalled: list[str]

    def respond(state: State, *, store: BaseStore) -> dict[str, Any]:
        namespace = ("memories", state["user"])
        found = store.search(namespace, query=state["said"], limit=3)
        store.put(namespace, str(uuid.uuid4()), {"text": state["said"]})
        return {"recalled": [item.value["text"] for item in found]}

    builder = StateGraph(State)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    store = store_of(mem)
    graph = builder.compile(store=store)

    first = graph.invoke({"user": "dana", "said": "I am allergic to peanuts", "recalled": []})
    assert first["recalled"] == []
    second = graph.invoke({"user": "dana", "said": "Can I eat peanuts?", "recalled": []})
    assert second["recalled"] == ["I am allergic to peanuts"]
    other = graph.invoke({"user": "eve", "said": "Can I eat peanuts?", "recalled": []})
    assert other["recalled"] == []  # another user's namespace holds nothing of dana's
    assert store.list_namespaces() == [("memories", "dana"), ("memories", "eve")]
