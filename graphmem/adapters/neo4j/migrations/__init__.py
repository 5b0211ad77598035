"""Numbered migrations, applied in number order by ``migrate`` and recorded in the database as
``(:Migration {id: number, name, applied_at, notes})``. Two kinds share one numbering:

- ``cypher/migrations/NNNN_name.cypher``: schema statements, each in its own auto-commit
  transaction (``graphmem.adapters.neo4j.queries.migrations``);
- ``NNNN_name.py`` in this package: a data migration, ``apply(conn) -> list[str]``, reading and
  writing through the connection with named queries; it returns notes for the operator.

A migration is recorded only after it finishes, so an interrupted one runs again from the
start: it must find what it already did and carry on. It must also keep meaning what it meant
when released: it never imports the store, the pipelines or the policy, but carries frozen
copies of what it needs (``frozen``).
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from graphmem.adapters.neo4j.queries import load
from graphmem.adapters.neo4j.queries import migrations as cypher_migrations
from graphmem.domain.models import utcnow
from graphmem.errors import ConfigurationError

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

__all__ = ["Migration", "migrate", "migrations"]

log = logging.getLogger("graphmem.adapters.neo4j.migrations")

_MODULE = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")


@dataclass(frozen=True)
class Migration:
    number: str
    name: str
    #: Applies it on a connection; returns the notes for the operator.
    run: Callable[[Neo4jConnection], list[str]]


def _statements(statements: Sequence[str], name: str, conn: Neo4jConnection) -> list[str]:
    for statement in statements:
        conn.schema(statement, what=name)
    return []


def migrations() -> list[Migration]:
    """Every migration, Cypher and Python, in number order."""
    found = [
        Migration(m.number, m.name, functools.partial(_statements, m.statements, m.name)) for m in cypher_migrations()
    ]
    for entry in resources.files(__name__).iterdir():
        match = _MODULE.match(entry.name)
        if match:
            stem = entry.name[:-3]
            module = importlib.import_module(f"{__name__}.{stem}")
            found.append(Migration(match.group(1), stem, module.apply))
    numbers = [m.number for m in found]
    duplicates = sorted({n for n in numbers if numbers.count(n) > 1})
    if duplicates:
        raise ConfigurationError(f"migration numbers used twice: {', '.join(duplicates)}")
    return sorted(found, key=lambda m: m.number)


def migrate(conn: Neo4jConnection, available: Sequence[Migration] | None = None) -> tuple[list[str], list[str]]:
    """Apply the pending migrations (of ``available``, default all) in number order, then wait
    for the indexes they created. Returns (names applied now, names already applied)."""
    done = {row["id"] for row in conn.read("admin/applied_migrations")}
    applied, already = [], []
    for migration in available if available is not None else migrations():
        if migration.number in done:
            already.append(migration.name)
            continue
        notes = migration.run(conn) or []
        for note in notes:
            log.warning("%s: %s", migration.name, note)
        conn.write(
            "admin/record_migration", id=migration.number, name=migration.name, applied_at=utcnow(), notes=list(notes)
        )
        applied.append(migration.name)
    conn.schema(load("admin/await_indexes").render(seconds=300), what="awaiting indexes")
    return applied, already
