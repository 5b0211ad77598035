"""``ErasureStore`` on Neo4j: a subject's nodes deleted batch by batch, counted on an erasure
record that names the subject only by keys under the database's erasure secret."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import Neo4jConnection, run
from graphmem.adapters.neo4j.rows import native
from graphmem.domain.models import ERASED_KINDS, Erasure, Scope, erasure_keys, new_id, utcnow


def erasure_secret(conn: Neo4jConnection) -> bytes:
    """The database's erasure secret (a Setting node), created with 32 random bytes by the
    first caller: erasure records are keyed under it (``graphmem.domain.models.erasure_key``)."""
    return bytes.fromhex(conn.write("erase/secret", candidate=secrets.token_hex(32))[0]["value"])


class Neo4jErasure:
    """``graphmem.ports.ErasureStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection
    _erasure_secret: bytes | None = None

    def start_erasure(
        self, subject_type: str, subject_id: str, project_id: str | None, actor: str | None = None
    ) -> Erasure:
        subject_key, project_key = erasure_keys(self._secret(), subject_type, subject_id, project_id)
        row = self.conn.write(
            "erase/start_erasure",
            subject_type=subject_type,
            subject_key=subject_key,
            project_key=project_key,
            at=utcnow(),
            id=new_id(),
            actor=actor,
        )[0]
        return Erasure.model_validate(native(row["record"]))

    def erase_batch(
        self, erasure_id: str, subject_type: str, subject_id: str, project_id: str | None, batch: int
    ) -> Erasure:
        """Delete up to ``batch`` nodes of each kind belonging to the subject and add the counts
        to the erasure record, in one transaction; the record after it."""

        def work(tx: ManagedTransaction) -> Erasure:
            counts = run(
                tx,
                "erase/erase_batch",
                subject_type=subject_type,
                subject_id=subject_id,
                project_id=project_id,
                batch=batch,
            )[0]
            record = run(tx, "erase/count_erasure", id=erasure_id, counts=counts, at=utcnow())[0]["record"]
            return Erasure.model_validate(native(record))

        return self.conn.write_tx(work, what="erase batch")

    def erased(self, scope: Scope) -> bool:
        return bool(self.conn.read("erase/erased", **self._erasure_keys(scope), kinds=list(ERASED_KINDS))[0]["erased"])

    def last_erasure(self, scope: Scope) -> datetime | None:
        at = self.conn.read("erase/last_erasure", **self._erasure_keys(scope))[0]["at"]
        return at.to_native() if at is not None else None

    def _erasure_keys(self, scope: Scope) -> dict[str, Any]:
        """The keys erasure records of the scope are found by: its subject's, and its project's
        or every project's (key "")."""
        subject_key, project_key = erasure_keys(
            self._secret(), scope.subject_type.value, scope.subject_id, scope.project_id
        )
        return {"subject_key": subject_key, "project_keys": sorted({"", project_key})}

    def _secret(self) -> bytes:
        """The database's erasure secret, made by the first store that asks."""
        if self._erasure_secret is None:
            self._erasure_secret = erasure_secret(self.conn)
        return self._erasure_secret
