"""Bad input: each case is one clear line naming the problem (file:line for ingest files),
exit code 2, and nothing of that line stored; hostile strings are stored and found as text."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from typer.testing import CliRunner

from graphmem import GraphMem
from graphmem.cli.main import app
from graphmem.errors import InvalidInput
from graphmem.models import MAX_RAW_CHARS, UnitFilter
from tests.conftest import fresh_scope

ENV = {"GRAPHMEM_EMBEDDER": "hashing"}


def episode(subject: str, raw: object = "fine", **extra) -> str:
    return json.dumps({"subject": subject, "occurred_at": "2024-01-01T00:00:00Z", "raw": raw, **extra})


def fact(**extra) -> dict:
    return {"subject": "Alice", "predicate": "likes", "object": "tea", **extra}


CASES = {
    "malformed JSON": lambda s: '{"subject": "' + s + '", "raw": ',
    "unknown subject type": lambda s: episode(s.replace("user:", "robot:")),
    "empty content": lambda s: episode(s, raw="   "),
    "oversized content": lambda s: episode(s, raw="x" * (MAX_RAW_CHARS + 1)),
    "NUL byte": lambda s: episode(s, raw="a\x00b"),
    "NaN confidence": lambda s: episode(s, facts=[fact(confidence=float("nan"))]),
    "infinite confidence": lambda s: episode(s, facts=[fact(confidence=float("inf"))]),
    "invalid time range": lambda s: episode(s, facts=[fact(valid_at="2024-01-01", invalid_at="2023-01-01")]),
    "naive garbage time": lambda s: episode(s).replace("2024-01-01T00:00:00Z", "yesterday-ish"),
}
MESSAGES = {
    "malformed JSON": "JSON", "unknown subject type": "subject type", "empty content": "empty",
    "oversized content": "limit", "NUL byte": "NUL", "NaN confidence": "confidence",
    "infinite confidence": "confidence", "invalid time range": "invalid_at is before valid_at",
    "naive garbage time": "occurred_at",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_bad_line_is_named_and_skipped(conn, tmp_path, case):
    scope = fresh_scope()
    subject = f"user:{scope.subject_id}"
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([episode(subject, raw="I like tea."), CASES[case](subject),
                               episode(subject, raw="I like chess.")]) + "\n")
    result = CliRunner().invoke(app, ["ingest", str(path), "--json"], env=ENV)
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    assert [f["line"] for f in doc["failed"]] == [2]
    error = doc["failed"][0]["error"]
    assert error.startswith(f"{path}:2: ") and "\n" not in error
    assert MESSAGES[case].lower() in error.lower(), error
    with GraphMem.connect() as mem:
        stored = sorted(u.content for u in mem.store.list_units(scope, UnitFilter()))
    assert stored == ["I like chess.", "I like tea."]  # the good lines, nothing of the bad one

    strict = CliRunner().invoke(app, ["ingest", str(path), "--strict", "--json"], env=ENV)
    assert strict.exit_code == 2 and json.loads(strict.stdout)["episodes"] == 0


def test_naive_datetime_is_refused_by_the_api(conn):
    with GraphMem.connect() as mem:
        with pytest.raises(InvalidInput):
            mem.remember("hello", "user:naive", at=datetime(2024, 1, 1))
        with pytest.raises(InvalidInput):
            mem.recall("hello", "user:naive", as_of=datetime(2024, 1, 1))


HOSTILE = [
    "MATCH (n) DETACH DELETE n // Robert'); DROP",
    "content:(a OR b) AND NOT \"c\" ~2 ^3 [x TO y] {z} \\ / && || !",
    "שלום עולם — مرحبا بالعالم 🚀👩🏽‍💻 ﷽",
    "$scope $1 ${x} {{dimensions}} `vector.dimensions`",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_stored_and_found_as_plain_text(conn, text):
    scope = fresh_scope()
    with GraphMem.connect() as mem:
        mem.remember(text, scope, extractor="none")
        assert [u.content for u in mem.store.list_units(scope, UnitFilter())] == [text]
        for mode in ("lexical", "hybrid"):
            hits = mem.recall(text, scope, k=3, mode=mode)
            assert [h.unit.content for h in hits] == [text], mode
        assert mem.store.count_units(fresh_scope()) == 0  # nothing leaked or deleted elsewhere
