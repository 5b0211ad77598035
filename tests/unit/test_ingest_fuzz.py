"""Fuzzing `graphmem ingest` (over the in-memory adapters): files mixing good episode lines
with lines whose fields hold arbitrary JSON values, lines reusing an episode id with other
content, and lines that are not episodes at all (any JSON value, deep nesting, free text, bytes
that are not UTF-8). Whatever the mix:

- no traceback, exit 2 when a line failed (else 0), one JSON document on stdout;
- every good line is stored and decided; every id-reusing line is named and leaves the stored
  episode as it was; a line that is not an episode is named (or skipped when blank);
- a line with an arbitrary field is either stored whole or named, never half-stored: named, it
  left no episode and no unit behind;
- each failure is one line starting ``file:line:``, and the count of episodes is true.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api import GraphMem
from graphmem.cli.common import CliState
from graphmem.cli.main import app
from graphmem.domain.models import Fact, Page, Scope, UnitFilter
from graphmem.embed import HashingEmbedder
from graphmem.errors import NotFound
from tests.examples import examples

SUBJECT = "user:fuzz"
EPISODE_FIELDS = ("id", "subject", "project", "occurred_at", "channel", "raw", "facts", "unknown")
FACT_FIELDS = (*Fact.model_fields, "unknown")

TEXT = st.one_of(
    st.text(max_size=12),
    st.text(max_size=12),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),  # lone surrogates
    st.sampled_from(
        [
            "2023-01-01",
            "2023-01-01T10:00:00+02:00",
            "0001-01-01T00:00:00+14:00",
            "9999-12-31T23:59:59-14:00",
            "9999-12-31T23:59:59+14:00",
            SUBJECT,
            "user: fuzz ",
            "user:fu\u200bzz",
            "user:\u202ezzuf",
            "shared:global",
            "robot:x",
            "semantic",
            "procedural",
            "assert",
            "retract",
            "x" * 1_001,
            "",
        ]
    ),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@dataclass
class Line:
    kind: str  # good | conflict | mutated | garbage
    data: bytes
    value: object = None  # the decoded record (good, conflict, mutated)


def good_record(n: int, with_fact: bool) -> dict:
    record = {
        "id": f"g{n}",
        "subject": SUBJECT,
        "occurred_at": f"2023-01-{n % 28 + 1:02d}",
        "raw": f"Line {n}: I like tea number {n}.",
    }
    if with_fact:
        record["facts"] = [{"subject": "Alice", "predicate": "likes", "object": f"thing {n}", "valid_at": "2023-01-01"}]
    return record


@st.composite
def lines(draw) -> list[Line]:
    out: list[Line] = []
    goods: list[dict] = []
    for n in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["good", "good", "mutated", "mutated", "conflict", "garbage"]))
        if kind == "conflict" and goods:
            record = {**draw(st.sampled_from(goods)), "raw": f"Line {n}: something else."}
        elif kind == "mutated":
            record = good_record(n, True)
            record["id"] = f"m{n}"
            if draw(st.booleans()):
                field = draw(st.sampled_from(EPISODE_FIELDS))
                value = draw(JSON | TEXT)
                record[field] = f"m{n}:{value}" if field == "id" and isinstance(value, str) else value
            else:
                record["facts"][0][draw(st.sampled_from(FACT_FIELDS))] = draw(JSON | TEXT)
        elif kind == "garbage":
            out.append(
                Line(
                    kind,
                    draw(
                        st.one_of(
                            JSON.map(lambda v: json.dumps(v).encode()),
                            st.sampled_from([17, 999, 1_000, 5_000]).map(lambda depth: b"[" * depth + b"]" * depth),
                            st.text(max_size=30)
                            .filter(lambda t: "\n" not in t)
                            .map(lambda t: t.encode("utf-8", "surrogatepass")),
                            st.binary(max_size=30).filter(lambda b: b"\n" not in b),
                        )
                    ),
                )
            )
            continue
        else:
            kind, record = "good", good_record(n, draw(st.booleans()))
            goods.append(record)
        ascii_only = draw(st.booleans())  # else raw UTF-8, where a lone surrogate is not UTF-8 at all
        # The record as the line means it: in JSON, "\ud800\udc00" is the one character U+10000.
        meant = json.loads(json.dumps(record))
        out.append(Line(kind, json.dumps(record, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"), meant))
    return out


def blank(data: bytes) -> bool:
    try:
        return not data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False


def where(record: dict) -> Scope | None:
    """The scope a stored copy of ``record`` would be in, if its fields can name one."""
    subject, project = record.get("subject"), record.get("project")
    if not isinstance(subject, str) or not isinstance(project, (str, type(None))):
        return None
    try:
        return Scope.parse(subject, project)
    except ValueError:
        return None


def stored(mem: GraphMem, record: dict):
    """The episode stored for ``record`` (by its id, or by its text when it gave none)."""
    scope = where(record)
    if scope is None:
        return None
    if isinstance(record.get("id"), str):
        try:
            return mem.episode(record["id"], scope)
        except NotFound:
            return None
    return next((e for e in mem.episodes(scope, limit=10_000) if e.raw == record.get("raw")), None)


@settings(
    max_examples=examples(250),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=lines())
def test_ingest_isolates_every_bad_line(tmp_path_factory, batch):
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
    path = tmp_path_factory.mktemp("fuzz") / "episodes.jsonl"
    path.write_bytes(b"\n".join(line.data for line in batch) + b"\n")

    result = CliRunner().invoke(app, ["ingest", str(path), "--json"], obj=CliState(factory=lambda s, **o: mem))

    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    doc = json.loads(result.stdout)
    failed = {f["line"]: f["error"] for f in doc["failed"]}
    assert result.exit_code == (2 if failed else 0)
    errors = [e for e in result.stderr.splitlines() if e.startswith("error: ")]
    assert sorted(errors) == sorted(f"error: {e}" for e in failed.values())
    for number, error in failed.items():
        assert error.startswith(f"{path}:{number}: ") and "\n" not in error
    for number, line in enumerate(batch, 1):
        if line.kind == "good":
            assert number not in failed, failed[number]
            assert stored(mem, line.value).raw == line.value["raw"]
            assert mem.decisions(SUBJECT, episode_id=line.value["id"])
        elif line.kind == "conflict":
            assert "already exists with different content" in failed[number]
            assert stored(mem, line.value).raw != line.value["raw"]
        elif line.kind == "garbage":
            assert (number in failed) != blank(line.data)
        elif number in failed:  # a mutated line, refused: nothing of it anywhere
            event("a line with an arbitrary field: refused")
            assert stored(mem, line.value) is None
            scope, eid = where(line.value), line.value.get("id")
            if scope is not None and isinstance(eid, str):
                units = mem.store.list_units(scope, UnitFilter(include_expired=True), Page(limit=10_000))
                assert not [u for u in units if u.source.episode_id == eid]
        else:  # a mutated line, accepted: stored whole
            event("a line with an arbitrary field: stored")
            assert stored(mem, line.value) is not None
    assert doc["episodes"] == sum(1 for n, line in enumerate(batch, 1) if n not in failed and not blank(line.data))
