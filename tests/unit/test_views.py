"""The JSON shapes (``graphmem.faces.views``): plain JSON, every time as ISO 8601 UTC with
``+00:00`` at full precision, every scope as ``TYPE:ID`` with its project beside it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api import GraphMem
from graphmem.domain.models import Fact, MemoryKind, Scope
from graphmem.embed import HashingEmbedder
from graphmem.faces import views
from graphmem.pipelines.write import WriteReport

OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T")
ALICE = Scope.parse("user:alice", "p1")


@given(moment=st.datetimes(timezones=OFFSETS))
def test_time_is_the_exact_instant_in_utc(moment: datetime) -> None:
    text = views.time(moment)
    assert text.endswith("+00:00") and datetime.fromisoformat(text) == moment
    assert views.time(None) is None


def times_in(value) -> list[str]:
    if isinstance(value, dict):
        return [t for v in value.values() for t in times_in(v)]
    if isinstance(value, list):
        return [t for v in value for t in times_in(v)]
    return [value] if isinstance(value, str) and ISO.match(value) else []


def scopes_in(value) -> list[tuple]:
    if isinstance(value, dict):
        own = [(value["scope"], value["project"])] if "scope" in value else []
        return own + [s for v in value.values() for s in scopes_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in scopes_in(v)]
    return []


def test_every_shape_is_plain_json_with_utc_times_and_flat_scopes() -> None:
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
    paris = Fact(
        subject="Alice",
        predicate="lives_in",
        object="Paris",
        single_valued=True,
        valid_at=datetime(2020, 1, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2))),
    )
    berlin = Fact(
        subject="Alice",
        predicate="lives_in",
        object="Berlin",
        single_valued=True,
        valid_at=datetime(2022, 1, 1, tzinfo=UTC),
    )
    mem.remember("I live in Paris.", ALICE, facts=[paris], at=datetime(2020, 1, 2, tzinfo=UTC))
    moved = mem.remember("I moved to Berlin.", ALICE, facts=[berlin], at=datetime(2022, 1, 2, tzinfo=UTC))
    held = mem.remember(
        "Always answer in French.",
        ALICE,
        facts=[Fact(subject="assistant", predicate="rule", kind=MemoryKind.procedural)],
    )
    block = mem.set_block(ALICE, "persona", "Be brief.", token_budget=10)
    assembly = mem.assemble("where does Alice live?", ALICE)
    [berlin_id] = moved.unit_ids

    shapes = {
        "report": views.write_report(moved),
        "hits": [views.hit(h) for h in mem.recall("Alice lives", ALICE, as_of=datetime(2021, 1, 1, tzinfo=UTC))],
        "history": [views.history_entry(e) for e in mem.history(ALICE, entity="Alice")],
        "explanation": views.explanation(mem.explain(berlin_id, ALICE)),
        "assembly": views.assembly(assembly),
        "stored_trace": views.stored_trace(mem.trace(assembly.trace.id, ALICE)),
        "block": views.block(block, tokens=3),
        "decisions": [views.decision(d) for d in mem.decisions(ALICE)],
        "episodes": [views.episode(e) for e in mem.episodes(ALICE)],
        "reviews": [views.review(r) for r in mem.reviews(ALICE)],
    }
    assert json.loads(json.dumps(shapes)) == shapes
    found = times_in(shapes)
    assert found and all(t.endswith("+00:00") for t in found)
    assert "2020-01-01T10:30:15.123456+00:00" in found  # full precision, in UTC
    assert set(scopes_in(shapes)) == {("user:alice", "p1")}
    assert held.reviews and shapes["reviews"][0]["candidate"]["kind"] == "procedural"
    [hit] = shapes["hits"]
    assert hit["content"] == "Alice lives in Paris"  # as of 2021
    assert {
        "id",
        "content",
        "kind",
        "score",
        "episode_id",
        "valid_at",
        "invalid_at",
        "created_at",
        "expired_at",
        "path",
    } <= set(hit)
    assert shapes["explanation"]["outgoing"][0]["unit_id"] == shapes["history"][0]["id"]


def test_write_report_counts_every_op() -> None:
    report = WriteReport(episodes=2, new_episodes=1, unit_ids=["u1"], failed=[("e1", "boom")])
    report.decisions.update({"ADD": 1})
    assert views.write_report(report) == {
        "episodes": 2,
        "new_episodes": 1,
        "decisions": {"ADD": 1, "UPDATE": 0, "DELETE": 0, "NOOP": 0},
        "unit_ids": ["u1"],
        "extraction_failed": [{"episode_id": "e1", "error": "boom"}],
        "reviews": [],
    }
