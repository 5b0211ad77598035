"""The admin CLI against a real Neo4j: JSON shapes, exit codes and effects (CLI.md)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphmem.adapters.neo4j_store import Neo4jStore
from graphmem.cli.main import app
from graphmem.models import Scope
from tests.conftest import fresh_scope

ENV = {"GRAPHMEM_EMBEDDER": "hashing"}


@pytest.fixture
def run(conn):
    """Invoke the CLI; the `conn` fixture makes sure Neo4j is up and migrated."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], env=ENV, input=input)

    return invoke


def subject(scope: Scope) -> str:
    return f"{scope.subject_type.value}:{scope.subject_id}"


def as_json(result) -> dict:
    assert result.exit_code in (0, 2), result.output
    return json.loads(result.stdout)


def one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def fact_line(scope: Scope, eid: str, when: str, city: str) -> str:
    return json.dumps({
        "id": eid, "subject": subject(scope), "occurred_at": when, "raw": f"I live in {city}.",
        "facts": [{"subject": "Alice", "predicate": "lives_in", "object": city,
                   "content": f"Alice lives in {city}", "valid_at": when, "single_valued": True}],
    })


def test_init_json_shape(run):
    result = run("init", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"applied", "already_applied"}
    assert doc["applied"] == []  # the conn fixture already migrated
    assert doc["already_applied"]


def test_ingest_reports_bad_lines_and_stores_good_ones(run, conn, tmp_path):
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join([
        fact_line(scope, f"{scope.subject_id}:1", "2023-01-01", "Paris"),
        "{not json",
        json.dumps({"subject": "robot:x", "occurred_at": "2023-01-01", "raw": "beep"}),
        json.dumps({"subject": subject(scope), "occurred_at": "2023-02-01", "raw": "I like green tea."}),
    ]) + "\n")
    result = run("ingest", path, "--json")
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    assert doc["episodes"] == 2
    assert [f["line"] for f in doc["failed"]] == [2, 3]
    assert doc["failed"][0]["error"].startswith(f"{path}:2: ")
    assert doc["failed"][1]["error"].startswith(f"{path}:3: ") and "robot" in doc["failed"][1]["error"]
    assert set(doc["decisions"]) == {"ADD", "UPDATE", "DELETE", "NOOP"}
    assert doc["decisions"]["ADD"] >= 2
    store = Neo4jStore(conn)
    assert store.get_episode(f"{scope.subject_id}:1", scope) is not None
    assert len(store.list_decisions(scope)) >= 2


def test_ingest_strict_stops_at_first_bad_line(run, conn, tmp_path):
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join([
        fact_line(scope, f"{scope.subject_id}:1", "2023-01-01", "Paris"),
        "[1, 2]",
        "{broken",
    ]) + "\n")
    result = run("ingest", path, "--strict", "--json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert [f["line"] for f in doc["failed"]] == [2]
    assert doc["episodes"] == 0
    assert Neo4jStore(conn).get_episode(f"{scope.subject_id}:1", scope) is None
    assert f"{path}:2:" in one_error_line(result)


def test_ingest_from_stdin(run):
    scope = fresh_scope()
    result = run("ingest", "-", "--json", "--extractor", "none",
                 input=json.dumps({"subject": subject(scope), "occurred_at": "2023-01-01T10:00:00",
                                   "raw": "We talked about the garden."}) + "\n")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["episodes"] == 1


@pytest.fixture
def moved(run, tmp_path):
    """Alice lived in Paris from 2023-01-01, then in Berlin from 2023-06-01 (a supersede)."""
    scope = fresh_scope()
    path = tmp_path / "moved.jsonl"
    path.write_text(fact_line(scope, f"{scope.subject_id}:p", "2023-01-01", "Paris") + "\n"
                    + fact_line(scope, f"{scope.subject_id}:b", "2023-06-01", "Berlin") + "\n")
    result = run("ingest", path, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["decisions"]["UPDATE"] == 1
    return scope


def test_recall_json_shape_and_as_of(run, moved):
    s = subject(moved)
    now = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))
    assert now["hits"], now
    hit = now["hits"][0]
    for key in ("id", "content", "kind", "score", "episode_id", "valid_at", "invalid_at",
                "created_at", "expired_at", "path"):
        assert key in hit
    contents = [h["content"] for h in now["hits"]]
    assert "Alice lives in Berlin" in contents and "Alice lives in Paris" not in contents

    before = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2023-03-01", "--json"))
    contents = [h["content"] for h in before["hits"]]
    assert "Alice lives in Paris" in contents and "Alice lives in Berlin" not in contents


def test_bad_as_of_is_one_line_exit_2(run, moved):
    result = run("recall", "Alice", "--subject", subject(moved), "--as-of", "last tuesday", "--json")
    assert result.exit_code == 2
    assert "--as-of" in one_error_line(result)
    assert result.stdout == ""


def test_bad_subject_is_one_line_exit_2(run):
    result = run("recall", "Alice", "--subject", "robot:x")
    assert result.exit_code == 2
    assert "robot" in one_error_line(result)


def test_assemble_json_trace(run, moved):
    s = subject(moved)
    assert run("blocks", "set", "--label", "persona", "--value", "Be brief.", "--budget", "20",
               "--subject", s).exit_code == 0
    doc = as_json(run("assemble", "where does Alice live", "--subject", s, "--json"))
    assert isinstance(doc["text"], str) and "Berlin" in doc["text"]
    trace = doc["trace"]
    assert set(trace) >= {"id", "resident_ids", "recalled_ids", "tokens"}
    assert trace["id"] and len(trace["resident_ids"]) == 1 and trace["recalled_ids"]
    assert trace["tokens"] > 0


def test_blocks_budget_and_read_only(run, conn):
    scope = fresh_scope()
    s = subject(scope)
    over = run("blocks", "set", "--label", "persona", "--value", "word " * 50, "--budget", "5", "--subject", s)
    assert over.exit_code == 2
    assert "budget" in one_error_line(over)

    made = as_json(run("blocks", "set", "--label", "persona", "--value", "Be brief.", "--budget", "10",
                       "--read-only", "--subject", s, "--json"))
    assert made["writable"] is False and made["token_budget"] == 10

    refused = run("blocks", "set", "--label", "persona", "--value", "Be verbose.", "--subject", s)
    assert refused.exit_code == 2
    assert "read-only" in one_error_line(refused)
    assert Neo4jStore(conn).get_block(scope, "persona").value == "Be brief."

    forced = run("blocks", "set", "--label", "persona", "--value", "Be verbose.", "--admin", "--subject", s)
    assert forced.exit_code == 0, forced.output
    assert Neo4jStore(conn).get_block(scope, "persona").value == "Be verbose."

    listed = as_json(run("blocks", "list", "--subject", s, "--json"))
    assert [b["label"] for b in listed["blocks"]] == ["persona"]
    assert as_json(run("blocks", "show", "--label", "persona", "--subject", s, "--json"))["value"] == "Be verbose."
    assert run("blocks", "delete", "--label", "persona", "--subject", s).exit_code == 0
    assert run("blocks", "show", "--label", "persona", "--subject", s).exit_code == 2


def test_explain_shows_decision_reason(run, moved):
    s = subject(moved)
    hits = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    berlin = next(h for h in hits if h["content"] == "Alice lives in Berlin")
    doc = as_json(run("explain", berlin["id"], "--subject", s, "--json"))
    assert doc["episode"]["id"] == f"{moved.subject_id}:b"
    assert doc["extractor_version"]
    update = next(d for d in doc["decisions"] if d["op"] == "UPDATE")
    assert "supersedes" in update["reason"]
    paris = next(h for h in as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2023-03-01",
                                        "--json"))["hits"] if h["content"] == "Alice lives in Paris")
    assert update["target_id"] == paris["id"]
    # learned in one write, Paris was bounded by Berlin from the start: no edge needed
    assert doc["outgoing"] == []

    human = run("explain", berlin["id"], "--subject", s)
    assert human.exit_code == 0 and update["reason"] in human.stdout

    missing = run("explain", "no-such-unit", "--subject", s)
    assert missing.exit_code == 2


def test_history_and_decisions(run, moved):
    s = subject(moved)
    entries = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))["entries"]
    assert [e["content"] for e in entries] == ["Alice lives in Paris", "Alice lives in Berlin"]
    # both learned in one write: Paris ends where Berlin begins and was never stopped being believed
    assert entries[0]["invalid_at"] == entries[1]["valid_at"] == "2023-06-01T00:00:00+00:00"
    assert entries[0]["expired_at"] is None
    assert any(d["op"] == "UPDATE" and d["reason"] for d in entries[0]["decisions"])
    updates = as_json(run("decisions", "--subject", s, "--op", "UPDATE", "--json"))["decisions"]
    assert len(updates) == 1 and updates[0]["reason"]
    assert run("history", "--subject", s).exit_code == 2


def test_remember_index_and_stats(run):
    scope = fresh_scope()
    s = subject(scope)
    doc = as_json(run("remember", "I like green tea.", "--subject", s, "--at", "2024-01-01T10:00", "--json"))
    assert doc["episodes"] == 1 and sum(doc["decisions"].values()) >= 1
    assert run("remember", "x", "--subject", s, "--at", "yesterday-ish").exit_code == 2
    status = as_json(run("index", "status", "--json"))
    assert status["units"] >= 1 and status["model"]
    rebuilt = as_json(run("index", "rebuild", "--subject", s, "--json"))
    assert rebuilt["units"] >= 1
    assert as_json(run("stats", "--json"))["units"] >= 1


def test_explain_reads_a_stored_assembly_trace(run):
    scope = fresh_scope()
    s = subject(scope)
    assert run("blocks", "set", "--subject", s, "--label", "persona", "--value", "Be brief.", "--budget", "20").exit_code == 0
    assert run("remember", "I like green tea.", "--subject", s).exit_code == 0
    assembled = as_json(run("assemble", "green tea", "--subject", s, "--json"))
    trace_id = assembled["trace"]["id"]
    shown = as_json(run("explain", trace_id, "--subject", s, "--json"))
    assert shown["trace"]["id"] == trace_id
    assert shown["trace"]["recalled_ids"] == assembled["trace"]["recalled_ids"]
    assert [u["content"] for u in shown["recalled"]] == ["I like green tea."]
    assert [b["label"] for b in shown["resident"]] == ["persona"]
    other = run("explain", trace_id, "--subject", subject(fresh_scope()), "--json")
    assert other.exit_code == 2  # another scope cannot read it
