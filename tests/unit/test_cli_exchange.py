"""`graphmem export|import|retract|subjects|units show|traces prune` over the in-memory adapters:
JSON shapes, exit codes, one-line errors, and effects read back through the library. The Neo4j
round trip through the CLI is in tests/neo4j/test_cli_exchange.py."""

from __future__ import annotations

import json
import os
import signal

import pytest

from graphmem.domain.models import RECORD_KINDS, Scope
from graphmem.faces.episode_lines import json_lines
from graphmem.pipelines import bulk as bulk_pipeline
from tests.cli import as_json, fact_line, one_error_line, subject
from tests.conftest import fresh_scope


@pytest.fixture
def moved(run, tmp_path) -> Scope:
    """Alice lived in Paris from 2023-01-01, then (learned later) in Berlin from 2023-06-01, with
    a block and an assembly."""
    scope = fresh_scope()
    for eid, when, city in (("p", "2023-01-01", "Paris"), ("b", "2023-06-01", "Berlin")):
        assert run("ingest", "-", input=fact_line(scope, f"{scope.subject_id}:{eid}", when, city)).exit_code == 0
    assert (
        run(
            "blocks", "set", "--label", "persona", "--value", "Be brief.", "--budget", "9", "--subject", subject(scope)
        ).exit_code
        == 0
    )
    assert run("assemble", "where does Alice live", "--subject", subject(scope)).exit_code == 0
    return scope


def ended(records: list[dict]) -> set[str]:
    """The units an invalidation record names."""
    return {r["unit_id"] for r in records if r["type"] == "invalidation"}


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_export_writes_the_header_then_every_record(run, moved, tmp_path):
    result = run("export", "--subject", subject(moved))
    assert result.exit_code == 0, result.output
    records = lines(result.stdout)
    header = records[0]
    assert {k: header[k] for k in ("type", "format", "version", "scope", "project")} == {
        "type": "header",
        "format": "graphmem-export",
        "version": 1,
        "scope": subject(moved),
        "project": None,
    }
    kinds = [r["type"] for r in records[1:]]
    assert kinds == sorted(kinds, key=RECORD_KINDS.index)  # kind by kind, in import order
    assert {"episode", "entity", "unit", "decision", "invalidation", "block", "trace", "usage"} <= set(kinds)
    assert result.stderr.strip() == f"exported {len(records) - 1} record(s) of {subject(moved)}"
    out = tmp_path / "alice.jsonl"
    assert run("export", "--subject", subject(moved), "--output", out).exit_code == 0
    assert lines(out.read_text())[1:] == records[1:] and [p.name for p in tmp_path.iterdir()] == ["alice.jsonl"]
    assert out.stat().st_mode & 0o777 == 0o600  # the subject's memory: this user's only
    for bad in (tmp_path / "no such folder" / "x.jsonl", tmp_path):
        result = run("export", "--subject", subject(moved), "--output", bad)
        assert result.exit_code == 1 and one_error_line(result).startswith(f"error: {bad}: cannot be written (")


def test_import_after_forgetting_restores_the_subject_and_twice_changes_nothing(run, mem, moved, tmp_path):
    s, out = subject(moved), tmp_path / "alice.jsonl"
    assert run("export", "--subject", s, "--output", out).exit_code == 0
    history = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))
    assert run("forget", "--subject", s, "--yes").exit_code == 0
    refused = run("import", out)
    assert refused.exit_code == 1 and "was erased" in one_error_line(refused) and mem.episodes(moved) == []
    doc = as_json(run("import", out, "--force", "--json"))
    written = lines(out.read_text())[1:]
    assert doc["scope"] == s and doc["imported"] == {k: sum(r["type"] == k for r in written) for k in RECORD_KINDS}
    assert as_json(run("history", "--entity", "Alice", "--subject", s, "--json")) == history
    again = as_json(run("import", out, "--force", "--json"))
    assert sum(again["imported"].values()) == 0 and again["skipped"] == doc["imported"]
    human = run("import", out, "--force")
    assert human.stdout.startswith(f"imported {s}: nothing new; {len(written)} record(s) already stored")


@pytest.mark.parametrize("stop", ["interrupt raised", "kill", "kill, then the driver breaks"])
def test_an_import_cut_short_says_so_and_completes_when_run_again(run, mem, moved, tmp_path, monkeypatch, stop):
    s, out = subject(moved), tmp_path / "alice.jsonl"
    assert run("export", "--subject", s, "--output", out).exit_code == 0
    history = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))
    assert run("forget", "--subject", s, "--yes").exit_code == 0
    load, calls = mem.store.load, []

    def stopped_at_the_third_write(*args):
        calls.append(args[1])
        if len(calls) == 3:
            if stop == "interrupt raised":
                raise KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGTERM)  # asks: this write goes on, no other starts
            if stop == "kill, then the driver breaks":
                raise BufferError("Existing exports of data: object cannot be re-sized")
        return load(*args)

    monkeypatch.setattr(mem.store, "load", stopped_at_the_third_write)
    cut = run("import", out, "--force")
    asked = [] if stop == "interrupt raised" else ["stopping after the write committing (again to stop at once)"]
    assert cut.exit_code == 130 and cut.stderr.splitlines() == [
        *asked,
        f"error: interrupted: {out} is imported in part; run the import again to complete it",
    ]
    assert len(calls) == 3 and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    monkeypatch.undo()
    done = []
    assert (
        sum(
            mem.import_(mem.read_export(json_lines(out.open(), "x")), force=True, progress=done.append)[
                "imported"
            ].values()
        )
        > 0
    )
    assert sum(done) == len(lines(out.read_text())) - 1  # every record: skipped ones, then each write's
    assert as_json(run("history", "--entity", "Alice", "--subject", s, "--json")) == history


def test_a_bad_record_is_named_by_line_and_nothing_is_stored(run, mem, moved, tmp_path):
    s = subject(moved)
    records = lines(run("export", "--subject", s).stdout)
    assert run("forget", "--subject", s, "--yes").exit_code == 0
    unit = next(n for n, r in enumerate(records) if r["type"] == "unit")
    records[unit]["time"]["created_at"] = "yesterday"
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(map(json.dumps, records)) + "\n")
    result = run("import", path, "--force")
    assert result.exit_code == 2
    assert one_error_line(result).startswith(f"error: {path}:{unit + 1}: unit time.created_at: ")
    assert mem.episodes(moved) == [] and mem.list_blocks(moved) == []  # the good records before it too


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda rs: rs.pop(0), ":1: an export starts with its header record"),
        (lambda rs: rs[0].update(scope="robot:x"), ":1: unknown subject type 'robot'"),
        (lambda rs: rs[0].update(version=2), ":1: header version: "),
        (lambda rs: rs.append({"type": "nonsense"}), "'nonsense' is not a record type"),
        (lambda rs: rs.append({"id": "x"}), "type: missing: use header|"),
        (lambda rs: rs.append(dict(next(r for r in rs if r["type"] == "episode"))), "again (first at"),
        (
            lambda rs: rs.append({**next(r for r in rs if r["type"] == "block"), "scope": "user:someone-else"}),
            "in an export of",
        ),
        (
            lambda rs: rs.remove(next(r for r in rs if r["type"] == "unit" and r["id"] in ended(rs))),
            "not in the export",
        ),
        # A unit stored "in 3021" would be invisible until then.
        (
            lambda rs: next(r for r in rs if r["type"] == "unit")["time"].update(
                created_at="3021-01-01T00:00:00+00:00"
            ),
            "was stored at 3021-01-01T00:00:00+00:00, in the future",
        ),
        (
            lambda rs: next(r for r in rs if r["type"] == "decision").update(decided_at="3021-01-01T00:00:00+00:00"),
            "in the future",
        ),
    ],
)
def test_an_inconsistent_export_is_refused_whole(run, mem, moved, tmp_path, change, message):
    s = subject(moved)
    records = lines(run("export", "--subject", s).stdout)
    assert run("forget", "--subject", s, "--yes").exit_code == 0
    change(records)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(map(json.dumps, records)) + "\n")
    result = run("import", path, "--force")
    assert result.exit_code == 2 and message in one_error_line(result)
    assert mem.episodes(moved) == []


def test_other_content_under_a_stored_id_is_a_conflict_and_nothing_is_written(run, mem, moved, tmp_path):
    s = subject(moved)
    records = lines(run("export", "--subject", s).stdout)
    unit = next(r for r in records if r["type"] == "unit")
    unit["content"] = "Alice lives in Oslo"
    records.append(
        {
            "type": "block",
            "id": "b-new",
            "label": "rules",
            "value": "No jargon.",
            "token_budget": 9,
            "writable": True,
            "description": None,
            "updated_at": "2024-01-01T00:00:00+00:00",
            "scope": s,
            "project": None,
        }
    )
    path = tmp_path / "changed.jsonl"
    path.write_text("\n".join(map(json.dumps, records)) + "\n")
    result = run("import", path)
    assert result.exit_code == 1
    assert one_error_line(result).endswith(f"unit {unit['id']} already exists with other content")
    assert [b.label for b in mem.list_blocks(moved)] == ["persona"]  # the new block was not written either


def test_import_reads_stdin_and_names_bad_json(run):
    result = run("import", "-", input='{"type": "header"\n')
    assert result.exit_code == 2 and one_error_line(result).startswith("error: <stdin>:1: not JSON")
    missing = run("import", "no/such/file.jsonl")
    assert missing.exit_code == 2 and "no such file" in one_error_line(missing)
    latin = run("import", "-", input=b'{"type": "header", "scope": "user:caf\xe9"}\n')
    assert latin.exit_code == 2 and one_error_line(latin).startswith("error: <stdin>: not UTF-8 text (")


def test_import_names_a_line_nested_past_the_decoder(run, tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"type": "header", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    result = run("import", deep)
    assert result.exit_code == 2
    assert one_error_line(result) == f"error: {deep}:1: JSON nested deeper than 16 levels"
    huge = run("import", "-", input='{"type": "header", "version": ' + "9" * 5000 + "}\n")
    assert huge.exit_code == 2
    assert one_error_line(huge) == "error: <stdin>:1: not JSON: a number with more digits than can be read"


def test_retract_json_and_errors(run, mem, moved):
    s = subject(moved)
    [berlin] = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    doc = as_json(run("retract", berlin["id"], "--subject", s, "--reason", "a typo", "--json"))
    assert doc["unit_id"] == berlin["id"] and doc["decisions"]["DELETE"] == 1
    [paris] = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    assert paris["content"] == "Alice lives in Paris"
    again = run("retract", berlin["id"], "--subject", s, "--reason", "a typo")
    assert again.exit_code == 0 and again.stdout.startswith("nothing to retract")
    unknown = run("retract", "nope", "--subject", s, "--reason", "a typo")
    assert unknown.exit_code == 2 and one_error_line(unknown) == f"error: no unit nope in scope {s}"
    assert run("retract", berlin["id"], "--subject", s).exit_code == 2  # --reason is required


def test_end_json_and_errors(run, moved):
    s = subject(moved)
    [berlin] = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    doc = as_json(run("end", berlin["id"], "--subject", s, "--reason", "moved on", "--at", "2024-01-01", "--json"))
    assert doc["unit_id"] == berlin["id"] and doc["decisions"]["UPDATE"] == 1
    then = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2023-09-01", "--json"))["hits"]
    assert [h["content"] for h in then] == ["Alice lives in Berlin"]  # before its end it stays true
    after = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2024-06-01", "--json"))["hits"]
    assert "Alice lives in Berlin" not in [h["content"] for h in after]
    again = run("end", berlin["id"], "--subject", s, "--reason", "moved on", "--at", "2024-01-01")
    assert again.exit_code == 0 and again.stdout.startswith("nothing to end")
    bad = run("end", berlin["id"], "--subject", s, "--reason", "x", "--at", "soon")
    assert bad.exit_code == 2 and "--at" in one_error_line(bad)
    assert run("end", berlin["id"], "--subject", s).exit_code == 2  # --reason is required


def test_subjects_and_units_show(run, moved):
    s = subject(moved)
    [row] = [r for r in as_json(run("subjects", "--json"))["subjects"] if r["scope"] == s]
    assert row == {"scope": s, "project": None, "episodes": 2, "units": 2, "decisions": 2}
    assert f"{s}: 2 episode(s), 2 unit(s), 2 decision(s)" in run("subjects").stdout
    [hit] = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    shown = as_json(run("units", "show", hit["id"], "--subject", s, "--json"))
    assert shown["id"] == hit["id"] and shown["content"] == "Alice lives in Berlin"
    # the assembly and the recall above both used it
    assert {k: shown["usage"][k] for k in ("unit_id", "recall_count", "archived_at")} == {
        "unit_id": hit["id"],
        "recall_count": 2,
        "archived_at": None,
    }
    missing = run("units", "show", "nope", "--subject", s)
    assert missing.exit_code == 2 and one_error_line(missing) == f"error: no unit nope in scope {s}"


def test_traces_prune(run, mem, moved):
    s = subject(moved)
    none_set = run("traces", "prune", "--subject", s)
    assert none_set.exit_code == 2 and "GRAPHMEM_TRACE_RETENTION_DAYS" in one_error_line(none_set)
    later = ("--older-than", "1", "--now", "2999-01-02")
    dry = as_json(run("traces", "prune", "--subject", s, *later, "--dry-run", "--json"))
    assert dry == {"traces": 1, "before": "2999-01-01T00:00:00+00:00", "dry_run": True, "subject": s, "project": None}
    assert as_json(run("traces", "prune", "--subject", s, "--older-than", "1", "--json"))["traces"] == 0  # too young
    done = run("traces", "prune", "--subject", s, *later)
    assert done.exit_code == 0 and done.stdout == "deleted 1 trace(s) created before 2999-01-01T00:00:00+00:00\n"
    assert as_json(run("traces", "prune", "--subject", s, *later, "--json"))["traces"] == 0


def test_bulk_ingest_and_import_load_an_empty_subject_and_refuse_one_that_holds_records(run, moved):
    fresh = fresh_scope()
    told = "\n".join(
        fact_line(fresh, f"{fresh.subject_id}:{eid}", when, city)
        for eid, when, city in (("b", "2023-06-01", "Berlin"), ("p", "2023-01-01", "Paris"))
    )
    loaded = as_json(run("ingest", "--bulk", "--json", "-", input=told))
    assert loaded["episodes"] == 2 and loaded["decisions"]["ADD"] == 2 and not loaded["failed"]
    again = run("ingest", "--bulk", "-", input=told)
    assert again.exit_code == 2
    assert "not empty" in one_error_line(again) and "without --bulk" in again.stderr
    export = run("export", "--subject", subject(moved)).stdout
    refused = run("import", "--bulk", "-", input=export)
    assert refused.exit_code == 2 and "not empty" in one_error_line(refused)
    history = as_json(run("units", "list", "--subject", subject(fresh), "--status", "all", "--json"))
    assert len(history["units"]) == 2


def test_a_bulk_import_of_a_file_is_checked_whole_then_loaded_in_segments(run, moved, tmp_path, monkeypatch):
    s, out = subject(moved), tmp_path / "alice.jsonl"
    assert run("export", "--subject", s, "--output", out).exit_code == 0
    history = as_json(run("history", "--entity", "Alice", "--subject", s, "--json"))
    assert run("forget", "--subject", s, "--yes").exit_code == 0
    records = out.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*records, '{"type": "unit"}']) + "\n")
    refused = run("import", "--bulk", "--force", bad)
    assert refused.exit_code == 2
    assert one_error_line(refused) == f"error: {bad}:{len(records) + 1}: scope: must be a string TYPE:ID"
    assert as_json(run("units", "list", "--subject", s, "--status", "all", "--json"))["units"] == []
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(records[0].encode() + b"\n\x90\xff\n")
    refused = run("import", "--bulk", "--force", binary)
    assert refused.exit_code == 2
    assert one_error_line(refused) == f"error: {binary}:2: not UTF-8 text (invalid start byte)"
    monkeypatch.setattr(bulk_pipeline, "SEGMENT", 2)
    monkeypatch.setattr(bulk_pipeline, "HELD", 0)  # read again
    loaded = as_json(run("import", "--bulk", "--force", "--json", out))
    assert sum(loaded["imported"].values()) == len(records) - 1
    assert as_json(run("history", "--entity", "Alice", "--subject", s, "--json")) == history
