"""Erasure records keyed by HMAC: records written before held a plain SHA-256 of the subject
(and of the project), which anyone can test a guess against ("user:alice"). Each becomes the
HMAC of that hash under the database's erasure secret (``graphmem.domain.models.keyed_digest``),
the key new records get for the same subject, so ``erased(scope)`` still knows them. Records
are rekeyed in one transaction and marked, so a second run finds nothing to do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.adapters.neo4j.migrations.frozen import erasure_secret
from graphmem.domain.models import keyed_digest

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection


def apply(conn: Neo4jConnection) -> list[str]:
    secret = erasure_secret(conn)
    rows = [
        {
            "id": r["id"],
            "subject_key": keyed_digest(secret, r["subject_hash"]),
            "project_key": keyed_digest(secret, r["project_hash"]) if r["project_hash"] else "",
        }
        for r in conn.read("erase/legacy_records")
    ]
    if rows:
        conn.write("erase/rekey_records", rows=rows)
    return []
