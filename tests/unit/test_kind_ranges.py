"""Kinds as the name ranges the vector index filters by: exactly the asked kinds, in as few
ranges (index calls) as there are runs of neighbouring names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphmem.entries import KINDS, kind_ranges
from graphmem.models import MemoryKind


def test_the_kind_names_are_every_kind_in_string_order():
    assert KINDS == tuple(sorted(k.value for k in MemoryKind))


@given(st.sets(st.sampled_from(KINDS)))
def test_ranges_hold_the_asked_kinds_and_no_other(asked):
    ranges = kind_ranges(sorted(asked))
    held = {k for k in KINDS if any(lo <= k <= hi for lo, hi in ranges)}
    assert held == (asked or set(KINDS))
    runs = sum(1 for i, k in enumerate(KINDS) if k in held and (i == 0 or KINDS[i - 1] not in held))
    assert len(ranges) == runs
