"""Hostile strings are stored and found as plain text: nothing reaches Cypher or Lucene as
syntax, and nothing leaks into or out of another scope. (Bad ingest lines are tested through
the CLI on the in-memory adapters: tests/unit/test_cli.py.)"""

from __future__ import annotations

import pytest

from graphmem import GraphMem
from graphmem.domain.models import UnitFilter
from tests.conftest import fresh_scope

pytestmark = pytest.mark.neo4j

HOSTILE = [
    "MATCH (n) DETACH DELETE n // Robert'); DROP",
    'content:(a OR b) AND NOT "c" ~2 ^3 [x TO y] {z} \\ / && || !',
    "שלום עולם — مرحبا بالعالم 🚀👩🏽‍💻 ﷽",
    "$scope $1 ${x} {{dimensions}} `vector.dimensions`",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_stored_and_found_as_plain_text(conn, settings, text):
    scope = fresh_scope()
    with GraphMem.connect(settings) as mem:
        mem.remember(text, scope, extractor="none")
        assert [u.content for u in mem.store.list_units(scope, UnitFilter())] == [text]
        for mode in ("lexical", "hybrid"):
            hits = mem.recall(text, scope, k=3, mode=mode)
            assert [h.unit.content for h in hits] == [text], mode
