"""The admin CLI over the in-memory adapters (the factory in the context object): JSON shapes,
exit codes, one-line errors and effects. The same commands against Neo4j are in
tests/neo4j/test_cli.py."""

from __future__ import annotations

import json
import os
import signal
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.adapters.memory import InMemoryStore
from graphmem.api import GraphMem
from graphmem.cli.common import CliState
from graphmem.domain.models import MAX_RAW_CHARS, Scope
from graphmem.errors import InvalidInput
from graphmem.faces.episode_lines import MAX_LINE_BYTES, parse_episode
from graphmem.pipelines import bulk as bulk_pipeline
from tests.cli import as_json, fact_line, invoker, one_error_line, subject
from tests.conftest import fresh_scope
from tests.examples import examples


@pytest.fixture
def run(mem: GraphMem):
    """Invoke the CLI; every command opens the same in-memory GraphMem."""
    opened: list[dict] = []

    def factory(settings, **options):
        opened.append(options)
        return mem

    invoke = invoker(CliState(factory=factory))
    invoke.opened = opened
    return invoke


def units(mem: GraphMem, scope: Scope) -> list[str]:
    return sorted(h.unit.content for h in mem.recall("anything", scope, k=100, mode="semantic"))


def test_ingest_reports_bad_lines_and_stores_good_ones(run, mem, tmp_path):
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    path.write_text(
        "\n".join(
            [
                fact_line(scope, "e1", "2023-01-01", "Paris"),
                "{not json",
                json.dumps({"subject": "robot:x", "occurred_at": "2023-01-01", "raw": "beep"}),
                json.dumps({"subject": subject(scope), "occurred_at": "2023-02-01", "raw": "I like green tea."}),
            ]
        )
        + "\n"
    )
    doc = as_json(run("ingest", path, "--json"), code=2)
    assert doc["episodes"] == 2
    assert [f["line"] for f in doc["failed"]] == [2, 3]
    assert doc["failed"][0]["error"].startswith(f"{path}:2: ")
    assert doc["failed"][1]["error"].startswith(f"{path}:3: ") and "robot" in doc["failed"][1]["error"]
    assert doc["decisions"] == {"ADD": 2, "UPDATE": 0, "DELETE": 0, "NOOP": 0}
    assert mem.episode("e1", scope).raw == "I live in Paris."
    assert units(mem, scope) == ["Alice lives in Paris", "I like green tea."]


@pytest.mark.parametrize("stop", ["ctrl-c", "kill", "kill twice", "kill, then the driver breaks"])
def test_ingest_interrupted_names_what_is_not_stored_and_a_rerun_completes_it(run, mem, tmp_path, monkeypatch, stop):
    """Ctrl-C or a kill stops an ingest between writes (the write under way goes on, the
    next is not decided), a second at once; whatever error the interrupted write then raises
    (the driver's read interrupted: a BufferError), it reads as interrupted."""
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(fact_line(scope, f"e{i}", "2023-01-01", f"City {i}") for i in range(60)) + "\n")
    put, calls = mem.store.put_episodes, []

    def stopped_at_the_second_write(episodes):
        calls.append(len(episodes))
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT if stop == "ctrl-c" else signal.SIGTERM)
            if stop == "kill twice":
                os.kill(os.getpid(), signal.SIGTERM)  # the handler raises here
            elif stop == "kill, then the driver breaks":
                raise BufferError("Existing exports of data: object cannot be re-sized")
        return put(episodes)

    monkeypatch.setattr(mem.store, "put_episodes", stopped_at_the_second_write)
    # (a run started in the background has SIGINT ignored: as they were is not the defaults)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    result = run("ingest", path, "--batch", "25", "--json")
    doc = as_json(result, code=130)
    assert doc["episodes"] == 25 and [f["line"] for f in doc["failed"]] == list(range(26, 61))
    assert result.stderr.splitlines() == [
        "stopping after the write committing (again to stop at once)",
        f"error: interrupted (35 episode(s) not confirmed stored, lines 26-60 of {path}; re-run to complete)",
    ]
    assert {sig: signal.getsignal(sig) for sig in before} == before  # as they were
    monkeypatch.undo()
    assert as_json(run("ingest", path, "--json"))["episodes"] == 60
    assert len(mem.decisions(scope, limit=100)) == 60


@pytest.mark.parametrize("phase", ["deciding", "loading"])
def test_a_bulk_ingest_interrupted_reports_nothing_stored_and_ingest_completes_it(
    run, mem, tmp_path, monkeypatch, phase
):
    """Found by a new user's trial: a Ctrl-C while a bulk ingest decided printed the decisions
    of writes never stored, and one while it loaded was ignored until the end (exit 0)."""
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(fact_line(scope, f"e{i}", "2023-01-01", f"City {i}") for i in range(60)) + "\n")
    if phase == "deciding":  # the in-memory store the writes are decided on
        target, name = InMemoryStore, "put_episodes"
    else:
        target, name = mem.store, "load"
    original, calls = getattr(target, name), []

    def interrupted_at_the_second_call(*args):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return original(*args)

    monkeypatch.setattr(target, name, interrupted_at_the_second_call)
    monkeypatch.setattr(bulk_pipeline, "BATCH", 10)  # several load transactions
    result = run("ingest", path, "--bulk", "--batch", "10", "--json")
    doc = as_json(result, code=130)
    assert doc["episodes"] == 0 and sum(doc["decisions"].values()) == 0
    assert [f["line"] for f in doc["failed"]] == list(range(1, 61))
    assert result.stderr.splitlines()[-1].endswith(f"lines 1-60 of {path}; re-run without --bulk to complete)")
    monkeypatch.undo()
    assert as_json(run("ingest", path, "--json"))["episodes"] == 60
    assert len(mem.decisions(scope, limit=100)) == 60 and len(mem.episodes(scope)) == 60


def test_lines_without_ids_ingested_again_add_nothing(run, mem, tmp_path):
    """A line without an id is named by its content: a second run of the file (after one cut
    short, say) finds its episodes stored; another line gets another episode."""
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    lines = [json.dumps({"subject": subject(scope), "occurred_at": "2023-01-01", "raw": f"note {i}"}) for i in range(3)]
    path.write_text("\n".join(lines) + "\n")
    assert as_json(run("ingest", path, "--json"))["new_episodes"] == 3
    path.write_text("\n".join([*lines, lines[0].replace("note 0", "note 3")]) + "\n")
    assert as_json(run("ingest", path, "--json"))["new_episodes"] == 1
    assert len(mem.episodes(scope)) == 4 and len(mem.decisions(scope, limit=100)) == 4


def test_ingest_strict_stops_at_first_bad_line_and_stores_nothing(run, mem, tmp_path):
    scope = fresh_scope()
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join([fact_line(scope, "e1", "2023-01-01", "Paris"), "[1, 2]", "{broken"]) + "\n")
    result = run("ingest", path, "--strict", "--json")
    doc = as_json(result, code=2)
    assert [f["line"] for f in doc["failed"]] == [2] and doc["episodes"] == 0
    assert f"{path}:2:" in one_error_line(result)
    assert mem.episodes(scope) == [] and run.opened == []  # it never even opened the memory


BAD_LINES = {
    "malformed JSON": (lambda s: '{"subject": "' + s + '", "raw": ', "JSON"),
    "unknown subject type": (lambda s: line(s.replace("user:", "robot:")), "subject type"),
    "empty content": (lambda s: line(s, raw="   "), "empty"),
    "oversized content": (lambda s: line(s, raw="x" * (MAX_RAW_CHARS + 1)), "limit"),
    "NUL byte": (lambda s: line(s, raw="a\x00b"), "NUL"),
    "NaN confidence": (lambda s: line(s, facts=[fact(confidence=float("nan"))]), "confidence"),
    "infinite confidence": (lambda s: line(s, facts=[fact(confidence=float("inf"))]), "confidence"),
    "invalid time range": (
        lambda s: line(s, facts=[fact(valid_at="2024-01-01", invalid_at="2023-01-01")]),
        "invalid_at is before valid_at",
    ),
    "told at the end of time": (
        lambda s: line(s).replace("2024-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"),
        "occurred_at: 9999-12-31T23:59:59.999999Z stands for no end",
    ),
    "garbage time": (lambda s: line(s).replace("2024-01-01T00:00:00Z", "yesterday-ish"), "occurred_at"),
    "garbage fact time": (lambda s: line(s, facts=[fact(valid_at="soon")]), "facts.0.valid_at"),
    "unknown key": (lambda s: line(s, mood="happy"), "unknown key(s) 'mood'"),
    # hostile input: each is one line, whatever it holds
    "5,000-deep JSON": (lambda s: "[" * 5000 + "]" * 5000, "nested deeper than 16 levels"),
    "5,000-deep facts": (
        lambda s: line(s)[:-1] + ', "facts": ' + "[" * 5000 + "]" * 5000 + "}",
        "nested deeper than 16 levels",
    ),
    "year 1 at +14:00": (
        lambda s: line(s).replace("2024-01-01T00:00:00Z", "0001-01-01T00:00:00+14:00"),
        "occurred_at: '0001-01-01T00:00:00+14:00' is outside the years 1..9999",
    ),
    "year 9999 at -14:00": (
        lambda s: line(s, facts=[fact(valid_at="9999-12-31T23:59:59-14:00")]),
        "facts.0.valid_at: '9999-12-31T23:59:59-14:00' is outside the years 1..9999",
    ),
    "integer time": (
        lambda s: line(s).replace('"2024-01-01T00:00:00Z"', "1700000000"),
        "occurred_at: a time is an ISO 8601 string",
    ),
    "integer fact time": (lambda s: line(s, facts=[fact(invalid_at=5)]), "facts.0.invalid_at: a time is an ISO 8601"),
    "lone surrogate": (lambda s: line(s, raw="tea \ud800"), "'raw': holds a lone surrogate (U+D800)"),
    "lone surrogate in a key": (lambda s: line(s, facts=[{**fact(), "\udc00": 1}]), "holds a lone surrogate (U+DC00)"),
    "not UTF-8": (lambda s: line(s, raw="caf\u00e9").encode().replace(b"caf\\u00e9", b"caf\xe9"), "not UTF-8 text"),
    "100,000-character id": (lambda s: line(s, id="x" * 100_000), "id: text is 100000 characters, over the 1000 limit"),
    "integer id": (lambda s: line(s, id=7), "id: Input should be a valid string"),
    "over-long channel": (lambda s: line(s, channel="c" * 201), "channel: text is 201 characters, over the 200 limit"),
    "over-long label": (
        lambda s: line(s, facts=[fact(labels=["l" * 201])]),
        "facts.0.labels.0: text is 201 characters",
    ),
    "too many labels": (
        lambda s: line(s, facts=[fact(labels=["l"] * 65)]),
        "facts.0.labels: Tuple should have at most 64",
    ),
    "zero-width subject": (lambda s: line(s + "\u200b"), "holds the hidden character U+200B"),
    "bidi subject": (lambda s: line(s.replace(":", ":\u202e")), "holds the hidden character U+202E"),
    "separator in a subject": (lambda s: line(s + "\u2028x"), "holds the hidden character U+2028"),
    "filler in a subject": (lambda s: line(s.replace(":", ":\u3164")), "holds the hidden character U+3164"),
    "bidi channel": (lambda s: line(s, channel="chat\u202e"), "channel: holds the hidden character U+202E"),
    "fact ending at the end of time": (
        lambda s: line(s, facts=[fact(invalid_at="9999-12-31T23:59:59.999999Z")]),
        "facts.0.invalid_at: 9999-12-31T23:59:59.999999Z stands for no end",
    ),
    "zero-width label": (
        lambda s: line(s, facts=[fact(labels=["work\u200b"])]),
        "facts.0.labels.0: holds the hidden character U+200B",
    ),
    "huge integer": (
        lambda s: line(s, facts=[fact(confidence=1)]).replace('"confidence": 1', '"confidence": ' + "9" * 5000),
        "more digits than can be read",
    ),
    "over-long line": (lambda s: line(s, raw="x" * (MAX_LINE_BYTES + 1)), f"line longer than {MAX_LINE_BYTES} bytes"),
}


def line(subject_: str, raw: object = "fine", **extra) -> str:
    return json.dumps({"subject": subject_, "occurred_at": "2024-01-01T00:00:00Z", "raw": raw, **extra})


def fact(**extra) -> dict:
    return {"subject": "Alice", "predicate": "likes", "object": "tea", **extra}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_each_bad_line_is_named_and_skipped(run, mem, tmp_path, case):
    scope = fresh_scope()
    make, words = BAD_LINES[case]
    path = tmp_path / "in.jsonl"
    bad = make(subject(scope))
    path.write_bytes(
        b"\n".join(
            [
                line(subject(scope), raw="I like tea.").encode(),
                bad if isinstance(bad, bytes) else bad.encode(),
                line(subject(scope), raw="I like chess.").encode(),
            ]
        )
        + b"\n"
    )
    result = run("ingest", path, "--json")
    doc = as_json(result, code=2)
    [failure] = doc["failed"]
    assert failure["line"] == 2 and failure["error"].startswith(f"{path}:2: ") and "\n" not in failure["error"]
    assert words.lower() in failure["error"].lower(), failure["error"]
    assert one_error_line(result) == f"error: {failure['error']}"
    assert doc["episodes"] == 2 and len(mem.episodes(scope)) == 2  # true counts
    assert units(mem, scope) == ["I like chess.", "I like tea."]  # the good lines, nothing of the bad one


def test_a_line_reusing_an_episode_id_is_named_and_the_others_stored(run, mem, tmp_path):
    scope, other = fresh_scope(), fresh_scope()
    first = tmp_path / "first.jsonl"
    first.write_text(
        json.dumps({"id": "e1", "subject": subject(scope), "occurred_at": "2024-01-01", "raw": "I like tea."}) + "\n"
    )
    assert as_json(run("ingest", first, "--json"))["episodes"] == 1
    path = tmp_path / "again.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": eid, "subject": subject(s), "occurred_at": "2024-01-01", "raw": raw})
            for eid, s, raw in [
                ("e2", scope, "I like jazz."),
                ("e1", scope, "I like coffee."),
                ("e1", other, "I like chess."),
                ("e1", scope, "I like tea."),
            ]
        )
        + "\n"
    )
    result = run("ingest", path, "--json")
    doc = as_json(result, code=2)
    assert doc["failed"] == [
        {
            "line": 2,
            "episode_id": "e1",
            "error": f"{path}:2: episode e1 already exists with different content; episodes are immutable",
        }
    ]
    assert doc["episodes"] == 3 and one_error_line(result) == f"error: {doc['failed'][0]['error']}"
    assert units(mem, scope) == ["I like jazz.", "I like tea."]
    assert units(mem, other) == ["I like chess."]  # another subject's e1


def test_ingest_from_stdin_and_unknown_extractor(run):
    s = subject(fresh_scope())
    episode = json.dumps({"subject": s, "occurred_at": "2023-01-01T10:00:00", "raw": "We talked about the garden."})
    assert as_json(run("ingest", "-", "--json", "--extractor", "none", input=episode + "\n"))["episodes"] == 1
    bad = run("ingest", "-", "--extractor", "magic", input=episode + "\n")
    assert bad.exit_code == 2 and one_error_line(bad) == "error: unknown extractor 'magic': use facts|rule|none|llm"


@pytest.fixture
def moved(run, tmp_path) -> Scope:
    """Alice lived in Paris from 2023-01-01, then in Berlin from 2023-06-01 (a supersede)."""
    scope = fresh_scope()
    path = tmp_path / "moved.jsonl"
    path.write_text(
        fact_line(scope, "p", "2023-01-01", "Paris")
        + "\n"
        + fact_line(scope, "b", "2023-06-01T09:30:00.250+02:00", "Berlin")
        + "\n"
    )
    assert as_json(run("ingest", path, "--json"))["decisions"]["UPDATE"] == 1
    return scope


def test_recall_json_shape_and_as_of(run, moved):
    s = subject(moved)
    found = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))
    [hit] = found["hits"]
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
        "hop",
        "scope",
        "project",
        "confidence",
        "similarity",
    } == set(hit)
    assert found["relevant"] is True and 0.0 <= hit["confidence"] <= 1.0
    assert hit["content"] == "Alice lives in Berlin" and hit["scope"] == s and hit["project"] is None
    assert 0.0 <= hit["similarity"] <= 1.0  # the question's, (1 + cos) / 2
    assert hit["valid_at"] == "2023-06-01T07:30:00.250000+00:00"  # full precision, UTC
    [before] = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2023-03-01", "--json"))[
        "hits"
    ]
    assert before["content"] == "Alice lives in Paris" and before["invalid_at"] == hit["valid_at"]
    human = run("recall", "where does Alice live", "--subject", s)
    assert human.exit_code == 0 and "Alice lives in Berlin" in human.stdout and "2023-06-01 07:30:00" in human.stdout


@pytest.mark.parametrize(
    "args, names",
    [
        (["recall", "Alice", "--as-of", "last tuesday"], "--as-of"),
        (["recall", "Alice", "--known-at", "2021-02-30"], "--known-at"),
        (["history", "--entity", "Alice", "--known-at", "x"], "--known-at"),
        (["remember", "x", "--at", "yesterday-ish"], "--at"),
        (["archive", "--now", "soon"], "--now"),
        (["recall", "Alice", "--as-of", "0001-01-01T00:00:00+14:00"], "--as-of"),
        (["recall", "Alice", "--known-at", "9999-12-31T23:59:59-14:00"], "--known-at"),
        (["remember", "x", "--at", "0001-01-01T01:00:00+02:00"], "--at"),
        (["archive", "--now", "9999-12-31T20:00:00-12:00"], "--now"),
    ],
)
def test_bad_times_are_one_line_exit_2(run, args, names):
    result = run(*args, "--subject", "user:alice", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    assert one_error_line(result).startswith(f"error: {names}: ")


def test_password_option_works_and_warns(run):
    result = run("--password", "s3cret", "recall", "Alice", "--subject", "user:alice", "--json")
    assert as_json(result)["hits"] == []
    assert result.stderr.startswith("warning: --password is visible to other local users")
    assert "s3cret" not in result.stderr


def test_bad_subject_and_bad_op_are_one_line_exit_2(run):
    result = run("recall", "Alice", "--subject", "robot:x")
    assert result.exit_code == 2 and "robot" in one_error_line(result)
    result = run("decisions", "--subject", "user:alice", "--op", "merge")
    assert result.exit_code == 2
    assert one_error_line(result) == "error: unknown op 'merge': use ADD|UPDATE|DELETE|NOOP"
    result = run("recall", "Alice", "--subject", "user:alice", "--kind", "foo")
    assert result.exit_code == 2
    assert one_error_line(result).startswith(
        "error: Invalid value for '--kind': 'foo' is not one of 'semantic', 'episodic', 'procedural'. (see `"
    )


@pytest.mark.parametrize("project", ["null", "None", "NULL", "undefined", "nil", "", " ", "\t", " none "])
def test_a_project_that_reads_as_no_project_is_refused_before_anything_is_read(run, mem, tmp_path, project):
    s = subject(fresh_scope())
    message = f"project {project!r} reads as no project: leave the project out for none"
    result = run("remember", "I like tea.", "--subject", s, "--project", project)
    assert result.exit_code == 2 and one_error_line(result).startswith(
        f"error: Invalid value for '--project': {message}"
    )
    assert run.opened == []  # named as it is read: no connection tried
    lines = tmp_path / "episodes.jsonl"
    lines.write_text(json.dumps({"subject": s, "project": project, "occurred_at": "2024-01-01", "raw": "tea"}) + "\n")
    doc = as_json(run("ingest", lines, "--json"), code=2)
    assert doc["episodes"] == 0 and doc["failed"][0]["error"] == f"{lines}:1: {message}"
    assert mem.subjects() == []


def test_assemble_json_trace_and_explain_it(run, moved):
    s = subject(moved)
    assert (
        run("blocks", "set", "--label", "persona", "--value", "Be brief.", "--budget", "20", "--subject", s).exit_code
        == 0
    )
    doc = as_json(run("assemble", "where does Alice live", "--subject", s, "--json"))
    assert "Berlin" in doc["text"] and "Paris" not in doc["text"]
    trace = doc["trace"]
    assert {
        "id",
        "resident_ids",
        "rule_ids",
        "recalled_ids",
        "tokens",
        "query",
        "created_at",
        "scope",
        "project",
    } == set(trace)
    assert len(trace["resident_ids"]) == 1 and len(trace["recalled_ids"]) == 1 and trace["tokens"] > 0
    shown = as_json(run("explain", trace["id"], "--subject", s, "--json"))
    assert shown["trace"] == trace
    assert [u["content"] for u in shown["recalled"]] == ["Alice lives in Berlin"]
    assert [b["label"] for b in shown["resident"]] == ["persona"]
    assert run("explain", trace["id"], "--subject", subject(fresh_scope())).exit_code == 2  # another scope


def test_blocks_budget_read_only_and_lifecycle(run, mem):
    scope = fresh_scope()
    s = subject(scope)
    over = run("blocks", "set", "--label", "persona", "--value", "word " * 50, "--budget", "5", "--subject", s)
    assert over.exit_code == 2 and "over its budget of 5" in one_error_line(over)
    made = as_json(
        run(
            "blocks",
            "set",
            "--label",
            "persona",
            "--value",
            "Be brief.",
            "--budget",
            "10",
            "--read-only",
            "--subject",
            s,
            "--json",
        )
    )
    assert (made["writable"], made["token_budget"], made["tokens"], made["scope"]) == (False, 10, 3, s)
    refused = run("blocks", "set", "--label", "persona", "--value", "Be verbose.", "--subject", s)
    assert refused.exit_code == 2 and "read-only" in one_error_line(refused)
    assert mem.get_block(scope, "persona").value == "Be brief."
    assert (
        run("blocks", "set", "--label", "persona", "--value", "Be verbose.", "--admin", "--subject", s).exit_code == 0
    )
    assert mem.get_block(scope, "persona").value == "Be verbose."
    assert [b["label"] for b in as_json(run("blocks", "list", "--subject", s, "--json"))["blocks"]] == ["persona"]
    assert run("blocks", "list", "--subject", s).stdout == "persona (budget 10, read-only)\n"  # no description
    assert as_json(run("blocks", "show", "--label", "persona", "--subject", s, "--json"))["value"] == "Be verbose."
    kept = run("blocks", "delete", "--label", "persona", "--subject", s)
    assert kept.exit_code == 2 and "read-only" in one_error_line(kept)  # else a writer could replace it
    assert run("blocks", "delete", "--label", "persona", "--admin", "--subject", s).exit_code == 0
    gone = run("blocks", "show", "--label", "persona", "--subject", s)
    assert gone.exit_code == 2 and one_error_line(gone) == f"error: no block 'persona' for {s}"
    assert run("blocks", "delete", "--label", "persona", "--subject", s).exit_code == 2


def test_explain_shows_decision_reason(run, moved):
    s = subject(moved)
    [hit] = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    doc = as_json(run("explain", hit["id"], "--subject", s, "--json"))
    assert doc["episode"]["id"] == "b" and doc["unit"]["scope"] == s and doc["extractor_version"] == "facts-1"
    [update] = [d for d in doc["decisions"] if d["op"] == "UPDATE"]
    assert "supersedes" in update["reason"] and update["target_id"]
    assert doc["outgoing"] == []  # learned in one write: Paris was bounded by Berlin from the start
    human = run("explain", hit["id"], "--subject", s)
    assert human.exit_code == 0 and update["reason"] in human.stdout
    missing = run("explain", "no-such-unit", "--subject", s)
    assert missing.exit_code == 2 and one_error_line(missing) == f"error: no unit no-such-unit in scope {s}"


def test_history_and_decisions(run, moved):
    s = subject(moved)
    entries = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))["entries"]
    assert [e["content"] for e in entries] == ["Alice lives in Paris", "Alice lives in Berlin"]
    # learned in one write: Paris ends where Berlin begins, and was never stopped being believed
    assert entries[0]["invalid_at"] == entries[1]["valid_at"] and entries[0]["expired_at"] is None
    assert entries[0]["slot"] == entries[1]["slot"] == "Alice lives_in"
    assert any(d["op"] == "UPDATE" and d["reason"] for d in entries[0]["decisions"])
    [update] = as_json(run("decisions", "--subject", s, "--op", "update", "--json"))["decisions"]
    assert update["reason"] and update["target_id"] == entries[0]["id"]
    assert len(as_json(run("decisions", "--subject", s, "--episode", "p", "--json"))["decisions"]) == 1
    neither = run("history", "--subject", s)
    assert neither.exit_code == 2 and "exactly one of" in one_error_line(neither)
    # a unit's history holds what it superseded: Berlin's UPDATE bounded Paris, ending no unit
    superseded = as_json(run("history", "--unit", entries[1]["id"], "--subject", s, "--json"))["entries"]
    assert [e["content"] for e in superseded] == ["Alice lives in Paris", "Alice lives in Berlin"]


def test_a_retracted_fact_stays_in_history_with_include_expired(run, moved):
    s = subject(moved)
    [paris, berlin] = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))["entries"]
    assert run("retract", berlin["id"], "--subject", s, "--reason", "wrong city").exit_code == 0
    current = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))["entries"]
    assert berlin["id"] not in [e["id"] for e in current]
    every = as_json(run("history", "--entity", "Alice", "--subject", s, "--include-expired", "--json"))["entries"]
    [gone] = [e for e in every if e["id"] == berlin["id"]]
    assert gone["expired_at"] and any(
        d["op"] == "DELETE" and d["reason"].startswith("wrong city") for d in gone["decisions"]
    )


def test_remember_and_episodes(run):
    s = subject(fresh_scope())
    doc = as_json(run("remember", "I like green tea.", "--subject", s, "--at", "2024-01-01T10:00", "--json"))
    assert doc["episodes"] == 1 and doc["decisions"]["ADD"] == 1 and len(doc["unit_ids"]) == 1
    [episode] = as_json(run("episodes", "list", "--subject", s, "--json"))["episodes"]
    assert episode["occurred_at"] == "2024-01-01T10:00:00+00:00" and episode["raw"] == "I like green tea."
    shown = as_json(run("episodes", "show", episode["id"], "--subject", s, "--json"))
    assert {k: v for k, v in shown.items() if k not in ("decisions", "units")} == episode
    assert shown["units"] == doc["unit_ids"] and [d["op"] for d in shown["decisions"]] == ["ADD"]
    deleted = as_json(run("episodes", "delete", episode["id"], "--subject", s, "--yes", "--json"))
    assert (deleted["units"], deleted["decisions"]) == (1, 1)
    assert as_json(run("episodes", "list", "--subject", s, "--json"))["episodes"] == []
    assert run("episodes", "show", episode["id"], "--subject", s).exit_code == 2


def test_review_holds_procedural_rules_until_approved(run):
    s = subject(fresh_scope())
    rule = json.dumps(
        {
            "subject": s,
            "occurred_at": "2024-01-01",
            "raw": "Answer in French.",
            "facts": [
                {"subject": "assistant", "predicate": "rule", "content": "Answer in French.", "kind": "procedural"}
            ],
        }
    )
    assert as_json(run("ingest", "-", "--json", input=rule + "\n"))["reviews"]
    [item] = as_json(run("review", "list", "--subject", s, "--json"))["items"]
    assert item["status"] == "pending" and item["candidate"]["content"] == "Answer in French."
    approved = as_json(run("review", "approve", item["id"], "--json"))
    assert approved["status"] == "approved" and approved["decisions"]["ADD"] == 1
    assert as_json(run("review", "list", "--subject", s, "--json"))["items"] == []


def test_forget_needs_yes_and_counts_what_it_erased(run, moved):
    s = subject(moved)
    refused = run("forget", "--subject", s)
    assert refused.exit_code == 2 and "--yes" in one_error_line(refused)
    counts = as_json(run("forget", "--subject", s, "--yes", "--json"))
    assert counts["units"] == 2 and counts["episodes"] == 2 and counts["erasure_id"]
    assert as_json(run("recall", "Alice", "--subject", s, "--json"))["hits"] == []


def test_operator_commands_need_a_database(run):
    doc = as_json(run("doctor", "--json"))
    assert doc["ok"] and [c["check"] for c in doc["checks"]] == [
        "database",
        "episodes",
        "embedder",
        "tokenizer",
        "default subject",
    ]
    for command in (["init"], ["stats"], ["index", "status"]):
        result = run(*command)
        assert result.exit_code == 1 and "no database" in one_error_line(result), command
    # init and doctor open the memory without migrating or checking the index first
    assert {k: run.opened[0][k] for k in ("migrate", "check_index")} == {"migrate": False, "check_index": False}


def test_naive_datetimes_are_refused_by_the_api(mem):
    with pytest.raises(InvalidInput):
        mem.remember("hello", "user:naive", at=datetime(2024, 1, 1))
    with pytest.raises(InvalidInput):
        mem.recall("hello", "user:naive", as_of=datetime(2024, 1, 1))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(valid_at=st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)))
def test_recall_table_shows_any_start_as_its_iso_date_and_second(run, valid_at):
    scope = fresh_scope()  # each example its own subject: the in-memory store is shared
    when = valid_at.isoformat()
    ingested = run("ingest", "-", input=fact_line(scope, "e1", when, "Paris") + "\n")
    assert ingested.exit_code == 0, ingested.output
    table = run("recall", "Paris", "--subject", subject(scope), "--as-of", when).stdout
    shown = table.splitlines()[1].split("  semantic  ")[1].split(" →")[0].strip()
    # Zero-padded years and the second it falls in: the table reads back as the stored time.
    assert datetime.fromisoformat(shown).replace(tzinfo=UTC) == valid_at.replace(microsecond=0)


def test_episodes_show_prints_the_structured_facts_an_episode_carries(run, tmp_path):
    scope = fresh_scope()
    path = tmp_path / "one.jsonl"
    path.write_text(fact_line(scope, "f1", "2023-01-01", "Paris") + "\n")
    assert run("ingest", path).exit_code == 0
    [fact] = as_json(run("episodes", "show", "f1", "--subject", subject(scope), "--json"))["facts"]
    lines = run("episodes", "show", "f1", "--subject", subject(scope)).stdout.splitlines()
    assert lines[1] == f"  fact: {fact['subject']} {fact['predicate']} {fact['object']}" + (
        f" (valid {fact['valid_at']} → …)" if fact["valid_at"] else ""
    )


def test_complete_decides_what_a_write_cut_short_left_undecided(run, mem):
    """An episode stored but never decided (a write killed between the two): recall says so
    under its table and in --json, doctor fails on it, and `complete` decides it, once."""
    scope = fresh_scope()
    run("remember", "I like green tea.", "--subject", subject(scope))
    episode = parse_episode(fact_line(scope, "e1", "2023-01-01", "Paris"))
    mem.store.put_episodes([episode])  # stage 0 of a write that never got further
    shown = run("recall", "what does alice like?", "--subject", subject(scope))
    assert shown.exit_code == 0 and "incomplete: 1 episode(s) stored without their decisions" in shown.stdout
    assert as_json(run("recall", "tea", "--subject", subject(scope), "--json"))["incomplete"] == 1
    doctor = as_json(run("doctor", "--json"))  # shown, not failed: the rest answers as well
    assert [c["detail"] for c in doctor["checks"] if c["check"] == "episodes"] == [
        "1 stored without their decisions (a write cut short, or one under way): recall misses what they teach; "
        "run `graphmem complete`"
    ]

    done = as_json(run("complete", "--subject", subject(scope), "--json"))
    assert (done["episodes"], done["decisions"]["ADD"]) == (1, 1)
    assert units(mem, scope) == ["Alice lives in Paris", "I like green tea."]
    assert "incomplete" not in as_json(run("recall", "tea", "--subject", subject(scope), "--json"))
    assert "incomplete" not in run("recall", "tea", "--subject", subject(scope)).stdout
    assert [c["detail"] for c in as_json(run("doctor", "--json"))["checks"] if c["check"] == "episodes"] == [
        "all decided"
    ]
    assert run("complete").stdout.strip() == "nothing to complete: every episode is decided"
