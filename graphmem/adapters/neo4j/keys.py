"""``KeyStore`` on Neo4j: the HTTP API's keys, stored by the digest of their secret."""

from __future__ import annotations

from datetime import datetime

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.rows import native
from graphmem.domain.models import ApiKey


class Neo4jKeys:
    """``graphmem.ports.KeyStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    def put_key(self, key: ApiKey) -> None:
        self.conn.write("keys/put_key", props={**key.model_dump(), "subjects": list(key.subjects)})

    def get_key(self, key_id: str) -> ApiKey | None:
        rows = self.conn.read("keys/get_key", id=key_id)
        return ApiKey.model_validate(native(rows[0]["key"])) if rows else None

    def list_keys(self) -> list[ApiKey]:
        return [ApiKey.model_validate(native(r["key"])) for r in self.conn.read("keys/list_keys")]

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        rows = self.conn.write("keys/revoke_key", id=key_id, at=at)
        return ApiKey.model_validate(native(rows[0]["key"])) if rows else None

    def drop_key_subject(self, subject: str, at: datetime) -> list[ApiKey]:
        rows = self.conn.write("keys/drop_subject", subject=subject, at=at)
        return [ApiKey.model_validate(native(r["key"])) for r in rows]
