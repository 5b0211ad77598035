"""Entities stored before migration 0015 get the first and last word of their names
(``frozen.name_props``), which a write's lookup of known names reads
(``Neo4jStore.known_names``): without them a name learnt earlier would not link the texts
written after. Page by page in id order; a second run sets the same values again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.adapters.neo4j.migrations.frozen import name_props
from graphmem.domain.models import normalise

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

PAGE = 1000


def apply(conn: Neo4jConnection) -> list[str]:
    after = ""
    while rows := conn.read("index/entities_page", scope=None, after=after, limit=PAGE):
        conn.write(
            "index/entity_words",
            rows=[{"id": r["id"], "props": name_props(r["name"], r["norm"] or normalise(r["name"]))} for r in rows],
        )
        after = rows[-1]["id"]
    return []
