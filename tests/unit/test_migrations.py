"""The migration mechanism (graphmem.adapters.neo4j.migrations) without a database: Cypher and Python
migrations in one numbering, applied in order once each, Python ones given the connection and
their notes logged and recorded."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

import graphmem.adapters.neo4j.migrations as mechanism
from graphmem.adapters.neo4j.migrations import Migration, migrate, migrations
from graphmem.adapters.neo4j.queries import Migration as CypherMigration
from graphmem.errors import ConfigurationError


class RecordingConnection:
    """What ``migrate`` sends: schema statements, writes, and which migrations are recorded."""

    def __init__(self, applied: set[str]):
        self.applied = applied
        self.sent: list[tuple] = []

    def read(self, name: str, /, **params) -> list[dict]:
        assert name == "admin/applied_migrations"
        return [{"id": number} for number in sorted(self.applied)]

    def write(self, name: str, /, **params) -> list[dict]:
        self.sent.append((name, params["id"], params["notes"]))
        return []

    def schema(self, text: str, what: str) -> None:
        self.sent.append(("schema", what, text))


def test_shipped_migrations_are_numbered_once_in_order_of_both_kinds():
    found = migrations()
    numbers = [m.number for m in found]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert "0011_normalise_subjects" in [m.name for m in found]  # a Python one among the Cypher files
    assert all(m.name.startswith(m.number + "_") and callable(m.run) for m in found)


def test_pending_migrations_run_in_order_with_the_connection_and_their_notes(caplog):
    seen = []

    def data_migration(conn) -> list[str]:
        seen.append(conn)
        return ["2 subjects merged"]

    schema = mechanism._statements  # how a Cypher migration runs its statements
    available = [
        Migration("0001", "0001_old", lambda conn: pytest.fail("already applied: never run again")),
        Migration(
            "0002", "0002_schema", lambda conn: schema(("CREATE INDEX a", "CREATE INDEX b"), "0002_schema", conn)
        ),
        Migration("0003", "0003_data", data_migration),
        Migration("0004", "0004_quiet", lambda conn: None),
    ]
    conn = RecordingConnection(applied={"0001"})
    with caplog.at_level(logging.WARNING, logger="graphmem.adapters.neo4j.migrations"):
        assert migrate(conn, available) == (["0002_schema", "0003_data", "0004_quiet"], ["0001_old"])
    assert seen == [conn]
    assert [s[:2] for s in conn.sent[:-1]] == [
        ("schema", "0002_schema"),
        ("schema", "0002_schema"),
        ("admin/record_migration", "0002"),
        ("admin/record_migration", "0003"),
        ("admin/record_migration", "0004"),
    ]
    assert [s[2] for s in conn.sent if s[0] == "admin/record_migration"] == [[], ["2 subjects merged"], []]
    assert conn.sent[-1][:2] == ("schema", "awaiting indexes")  # indexes the migrations made are online
    assert caplog.messages == ["0003_data: 2 subjects merged"]


def test_a_number_used_by_both_kinds_is_refused(monkeypatch):
    monkeypatch.setattr(mechanism, "cypher_migrations", lambda: [CypherMigration("0011", "0011_other", ("X",))])
    with pytest.raises(ConfigurationError, match="migration numbers used twice: 0011"):
        migrations()


#: What a data migration may import from graphmem: the domain, the connection and the loader, and
#: the frozen copies beside it; never the live store, pipelines or policy, which keep changing.
MAY_IMPORT = (
    "graphmem.domain",
    "graphmem.errors",
    "graphmem.adapters.neo4j.driver",
    "graphmem.adapters.neo4j.queries",
    "graphmem.adapters.neo4j.migrations.frozen",
)


def test_data_migrations_import_only_the_domain_and_their_frozen_copies():
    folder = Path(mechanism.__file__).parent
    imported = {}
    for path in [*sorted(folder.glob("[0-9][0-9][0-9][0-9]_*.py")), folder / "frozen.py"]:
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported[path.name] = {n for n in names if n.startswith("graphmem")}
    wrong = {
        (module, name)
        for module, names in imported.items()
        for name in names
        if not any(name == ok or name.startswith(ok + ".") for ok in MAY_IMPORT)
    }
    assert len(imported) > 5 and wrong == set()
