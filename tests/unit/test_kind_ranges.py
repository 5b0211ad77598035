"""Kinds as the name ranges the vector index filters by: exactly the asked kinds, in as few
ranges (index calls) as there are runs of neighbouring names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.entries import KINDS, from_micros, kind_ranges, near, vector_calls
from graphmem.domain.models import MemoryKind


def test_the_kind_names_are_every_kind_in_string_order():
    assert tuple(sorted(k.value for k in MemoryKind)) == KINDS


@given(st.sets(st.sampled_from(KINDS)))
def test_ranges_hold_the_asked_kinds_and_no_other(asked):
    ranges = kind_ranges(sorted(asked))
    held = {k for k in KINDS if any(lo <= k <= hi for lo, hi in ranges)}
    assert held == (asked or set(KINDS))
    runs = sum(1 for i, k in enumerate(KINDS) if k in held and (i == 0 or KINDS[i - 1] not in held))
    assert len(ranges) == runs


_MICROS = st.integers(min_value=-(10**9), max_value=10**9)
_FAR = st.integers(min_value=-(10**12), max_value=10**12)  # beyond a window's three-day margin


@given(
    st.sets(st.sampled_from(KINDS)),
    _MICROS,
    st.integers(min_value=1, max_value=10**8),
    _FAR,
    st.one_of(st.just(1), st.integers(min_value=1, max_value=10**8)),
    st.lists(st.tuples(st.sampled_from(KINDS), _FAR, _FAR), max_size=30),
)
def test_a_time_rule_read_from_the_semantic_calls_finds_what_its_own_calls_would(
    asked, start, length, lo, width, entries
):
    """vector_calls: the semantic calls still cover exactly the asked kinds, and a time rule
    they absorb (its own calls dropped) finds, among the entries the semantic calls read (the
    world range), exactly the entries its own predicates would."""
    window = (from_micros(start), from_micros(start + length))
    world = (lo, lo + width)
    rules = near(window, world, sorted(asked))
    calls, own = vector_calls(sorted(asked), world, rules)
    covered = [k for k in KINDS for c in calls if c[0] <= k <= c[1]]
    assert sorted(covered) == sorted(asked or KINDS)
    assert all(r in rules for r in own)
    for rule in (r for r in rules if r not in own):
        for kind, a, b in entries:
            t_from, t_to = lo + min(a, b), lo + max(a, b) + 1
            in_world = t_from < world[1] and t_to > world[0]
            read = in_world and any(c[0] <= kind <= c[1] and c[2] is rule.event for c in calls)
            own_call = kind in rule.kinds and rule.from_lo <= t_from < rule.from_hi and t_to > rule.to_lo and in_world
            assert read == own_call
