"""The Python API raises only GraphMemError: every public GraphMem method, called with values of
any type in any argument (a string for k, a naive datetime, a number for a subject, an unknown
mode, hidden characters in a subject), either answers or raises a GraphMemError subclass."""

from __future__ import annotations

import contextlib
import inspect
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.api import GraphMem
from graphmem.domain.limits import MAX_BLOCK_TOKENS, MAX_HOPS, MAX_K
from graphmem.domain.models import MemoryKind, Scope
from graphmem.errors import GraphMemError, InvalidInput
from tests.examples import examples

METHODS = sorted(
    name
    for name, member in vars(GraphMem).items()
    if not name.startswith("_") and inspect.isfunction(member) and name != "close"
)

ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 1_200),
    st.floats(),
    st.text(max_size=12),
    st.datetimes(),
    st.datetimes(timezones=st.just(UTC)),
    st.sampled_from(
        [
            "user:alice",
            "user:bob",
            "robot:x",
            "user:al\u200bice",
            "user: alice ",
            "hybrid",
            "semantc",
            "semantic",
            "ADD",
            "merge",
            "rule",
            "persona",
            "0001-01-01T00:00:00+14:00",
        ]
    ),
    st.just(Scope.parse("user:alice")),
    st.lists(st.sampled_from(list(MemoryKind) + ["semantic", "x", 3]), max_size=2),
    st.lists(st.text(max_size=4), max_size=2),
)


@pytest.fixture
def mem(memory_mem: GraphMem) -> GraphMem:
    memory_mem.remember("Alice lives in Paris.", "user:alice")
    memory_mem.set_block("user:alice", "persona", "Be brief.", token_budget=10)
    return memory_mem


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_public_methods_raise_only_graphmem_errors(mem, data):
    name = data.draw(st.sampled_from(METHODS), label="method")
    method = getattr(mem, name)
    arguments = {}
    for parameter in inspect.signature(method).parameters.values():
        if parameter.default is inspect.Parameter.empty or data.draw(st.booleans()):
            arguments[parameter.name] = data.draw(ANYTHING, label=parameter.name)
    with contextlib.suppress(GraphMemError):
        method(**arguments)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.recall("tea", "user:alice", k="5"), "k: Input should be a valid integer"),
        (
            lambda m: m.recall("tea", "user:alice", mode="semantc"),
            "mode: Input should be 'hybrid', 'semantic' or 'lexical'",
        ),
        (lambda m: m.recall("tea", 7), "subject: Input should be a valid string"),
        (lambda m: m.recall("tea", "user:alice", kinds=["facts"]), "kinds.0: Input should be 'semantic'"),
        (
            lambda m: m.history("user:alice", entity="Alice", known_at=__import__("datetime").datetime(2024, 1, 1)),
            "known_at: Input should have timezone info",
        ),
        (lambda m: m.remember("tea", "user:al\u200bice"), "holds the hidden character U+200B"),
        (lambda m: m.remember("tea", "user:\ufffd"), "holds the hidden character U+FFFD"),  # undecodable bytes
        # A Cyrillic "а" in a Latin name: a second alice that reads as the first.
        (lambda m: m.remember("tea", "user:\u0430lice"), "mixes Cyrillic and Latin letters, which look alike"),
        (lambda m: m.remember("tea", "user:alice", project="\u03bfps"), "mixes Greek and Latin letters"),
        # A fact naming "Ali<ZWSP>ce" would make a second Alice that reads as the first.
        (
            lambda m: m.remember("x", "user:alice", facts=[{"subject": "Ali\u200bce", "predicate": "lives_in"}]),
            "holds the hidden character U+200B (control, format, separator, ignorable or undecodable): not allowed "
            "in a fact's names",
        ),
        (
            lambda m: m.remember(
                "x", "user:alice", facts=[{"subject": "Eve", "predicate": "in", "object": "Li\u034fma"}]
            ),
            "holds the hidden character U+034F",
        ),  # the combining grapheme joiner: default-ignorable
        (lambda m: m.recall("", "user:alice"), "query: String should have at least 1 character"),
        # The limits every face shares (graphmem.domain.limits), named as the argument they bound.
        (lambda m: m.recall("tea", "user:alice", k=MAX_K + 1), f"k: Input should be less than or equal to {MAX_K}"),
        (
            lambda m: m.recall("tea", "user:alice", hops=MAX_HOPS + 1),
            f"hops: Input should be less than or equal to {MAX_HOPS}",
        ),
        (lambda m: m.assemble("tea", "user:alice", hops=-1), "hops: Input should be greater than or equal to 0"),
        (
            lambda m: m.set_block("user:alice", "persona", "x", token_budget=MAX_BLOCK_TOKENS + 1),
            f"token_budget: Input should be less than or equal to {MAX_BLOCK_TOKENS}",
        ),
        (lambda m: m.recall(" \t\n", "user:alice"), "query: the question is blank"),
        (lambda m: m.assemble("   ", "user:alice"), "query: the question is blank"),
        (lambda m: m.assemble("q" * 10_001, "user:alice"), "query: String should have at most 10000 characters"),
        (lambda m: m.set_block("user:alice", "persona", "tea \ud800"), "holds a lone surrogate (U+D800)"),
        (lambda m: m.prune_traces(older_than_days=float("nan")), "older than nan days: give a positive number"),
    ],
)
def test_bad_arguments_are_named_in_one_line(mem, call, message):
    with pytest.raises(InvalidInput) as refused:
        call(mem)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_traces_older_than_the_calendar_reaches_are_none(mem):
    # The property test above found it: 739,951 days before now is before year 1.
    mem.assemble("where does Alice live?", "user:alice")
    for days in (739_951.0, float("inf")):
        assert mem.prune_traces(older_than_days=days, dry_run=True)["traces"] == 0
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert mem.prune_traces(older_than_days=0.5, now=tomorrow, dry_run=True)["traces"] == 1
