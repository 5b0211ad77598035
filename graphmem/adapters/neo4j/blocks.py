"""``BlockStore`` on Neo4j: a subject's resident blocks, one per label."""

from __future__ import annotations

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.rows import block_params, model_from_props
from graphmem.domain.models import MemoryBlock, Scope


class Neo4jBlocks:
    """``graphmem.ports.BlockStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    def put_block(self, block: MemoryBlock) -> None:
        self.conn.write("blocks/put_block", **block_params(block))

    def list_blocks(self, scope: Scope, label: str | None = None) -> list[MemoryBlock]:
        rows = self.conn.read(
            "blocks/list_blocks",
            scope=scope.key,
            subject_type=scope.subject_type.value,
            subject_id=scope.subject_id,
            label=label,
        )
        return [model_from_props(MemoryBlock, r["block"], scope) for r in rows]

    def get_block(self, scope: Scope, label: str) -> MemoryBlock | None:
        found = self.list_blocks(scope, label)
        return found[0] if found else None

    def delete_block(self, scope: Scope, label: str) -> bool:
        return bool(self.conn.write("blocks/delete_block", scope=scope.key, label=label)[0]["deleted"] > 0)
