"""`graphmem units list`, `entities list|show` over the in-memory adapters: JSON shapes, paging
with the printed cursor, filters, and errors as one line with exit 2."""

from __future__ import annotations

import json

import pytest

from graphmem.api import GraphMem
from graphmem.cli.common import CliState
from tests.cli import as_json, invoker, one_error_line, subject
from tests.conftest import fresh_scope


@pytest.fixture
def run(memory_mem: GraphMem):
    return invoker(CliState(factory=lambda settings, **options: memory_mem))


def ingest(run, tmp_path, lines: list[dict]) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert run("ingest", path, "--json").exit_code == 0


def lives(s: str, city: str, since: str) -> dict:
    fact = {"subject": "Maria", "predicate": "lives_in", "object": city, "content": f"Maria lives in {city}"}
    return {
        "subject": s,
        "occurred_at": since,
        "raw": f"Maria moved to {city}.",
        "facts": [{**fact, "valid_at": since, "single_valued": True}],
    }


@pytest.fixture
def maria(run, tmp_path) -> str:
    s = subject(fresh_scope())
    ingest(run, tmp_path, [lives(s, "Lisbon", "2019-01-01")])
    ingest(run, tmp_path, [lives(s, "Porto", "2022-01-01")])
    return s


def test_units_list_pages_newest_first_with_the_printed_cursor(run, maria):
    first = as_json(run("units", "list", "-s", maria, "--status", "all", "--limit", "1", "--json"))
    assert [u["content"] for u in first["units"]] == ["Maria lives in Porto"]
    assert first["units"][0]["time"]["created_at"] and first["next_cursor"]
    second = as_json(
        run("units", "list", "-s", maria, "--status", "all", "--limit", "1", "--cursor", first["next_cursor"], "--json")
    )
    assert [u["content"] for u in second["units"]] == ["Maria lives in Lisbon"]
    assert second["next_cursor"] is None
    human = run("units", "list", "-s", maria, "--status", "all", "--limit", "1")
    assert "Maria lives in Porto" in human.stdout and "more: --cursor " in human.stderr


def test_units_list_filters(run, maria):
    def contents(*args: str) -> list[str]:
        return [u["content"] for u in as_json(run("units", "list", "-s", maria, *args, "--json"))["units"]]

    assert contents() == ["Maria lives in Porto"]
    assert contents("--status", "ended") == ["Maria lives in Lisbon"]
    assert contents("--as-of", "2020-06-01") == ["Maria lives in Lisbon"]
    assert contents("--entity", "lisbon", "--status", "all") == ["Maria lives in Lisbon"]
    assert contents("--contains", "PORTO") == ["Maria lives in Porto"]
    assert contents("--kind", "procedural") == []
    assert "no units" in run("units", "list", "-s", maria, "--kind", "procedural").stdout


def test_entities_list_and_show(run, maria):
    listed = as_json(run("entities", "list", "-s", maria, "--json"))
    assert [(e["name"], e["facts"]) for e in listed["entities"]] == [("Lisbon", 0), ("Maria", 1), ("Porto", 1)]
    assert listed["next_cursor"] is None
    assert [
        e["name"] for e in as_json(run("entities", "list", "-s", maria, "--prefix", "ma", "--json"))["entities"]
    ] == ["Maria"]
    paged = as_json(run("entities", "list", "-s", maria, "--limit", "2", "--json"))
    rest = as_json(run("entities", "list", "-s", maria, "--limit", "2", "--cursor", paged["next_cursor"], "--json"))
    assert [e["name"] for e in paged["entities"] + rest["entities"]] == ["Lisbon", "Maria", "Porto"]
    shown = as_json(run("entities", "show", "maria", "-s", maria, "--json"))
    assert shown["entity"]["name"] == "Maria"
    assert [u["content"] for u in shown["facts"]] == ["Maria lives in Porto"]
    assert [(e["content"], e["invalid_at"]) for e in shown["history"]] == [
        ("Maria lives in Lisbon", "2022-01-01T00:00:00+00:00"),
        ("Maria lives in Porto", None),
    ]
    human = run("entities", "show", "Maria", "-s", maria).stdout
    assert "1 fact(s) hold now" in human and "Maria lives in Lisbon" in human


def test_listing_errors_are_one_line(run, maria):
    bad = run("units", "list", "-s", maria, "--status", "gone")
    assert bad.exit_code == 2 and "gone" in one_error_line(bad)
    bad = run("units", "list", "-s", maria, "--cursor", "not-a-cursor")
    assert bad.exit_code == 2 and "cursor" in one_error_line(bad)
    missing = run("entities", "show", "Nobody", "-s", maria)
    assert missing.exit_code != 0 and "no entity 'Nobody'" in one_error_line(missing)
    other = run("entities", "show", "Maria", "-s", subject(fresh_scope()))
    assert other.exit_code != 0 and "no entity" in one_error_line(other)
