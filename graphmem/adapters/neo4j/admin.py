"""``graphmem.ports.Database`` on Neo4j: migrations, server version, index health, and the
flush of erased values out of the transaction logs."""

from __future__ import annotations

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex, index_name
from graphmem.adapters.neo4j.migrations import migrations
from graphmem.domain.models import IndexStatus
from graphmem.errors import BackendError

#: The fulltext indexes recall needs besides the live generation's vector index.
FULLTEXT_INDEXES = ("entity_names", "entry_text")

_NO_PROCEDURE = "Neo.ClientError.Procedure.ProcedureNotFound"
#: Filler rounds: each filler transaction (the node's creation, then its deletion) logs more than
#: the rotation size, so each closes the log it was written to. Neo4j 2026.02 then prunes every
#: log before the one holding the checkpoint; 5.26 keeps one more (measured: after one round its
#: checkpoint found nothing to prune). Two rounds close four logs, enough for both.
_ROUNDS = 2


def flush_erased(conn: Neo4jConnection, log_rotation_kib: int | None) -> bool:
    """Push an erasure's deleted values out of the transaction logs, after it committed.

    - With ``log_rotation_kib`` (the server's ``db.tx_log.rotation.size``), writes and deletes
      throwaway nodes larger than it, which closes the log holding the erased values.
    - Then asks for a checkpoint, which prunes closed logs: True when the server checkpointed
      on request (Enterprise), False when it has no such procedure (Community checkpoints on
      its own schedule). What else stays on disk: docs/security.md ("Erasure on disk").
    """
    if log_rotation_kib:
        for _ in range(_ROUNDS):
            conn.write("admin/write_log_filler", pad="." * (log_rotation_kib * 1024))
            conn.write("admin/delete_log_filler")
    try:
        conn.write("admin/checkpoint")
    except BackendError as exc:
        if getattr(exc.__cause__, "code", None) == _NO_PROCEDURE:
            return False
        raise
    return True


class Neo4jDatabase:
    """The Neo4j server behind a ``Neo4jStore`` and ``Neo4jIndex`` (see the port).

    ``log_rotation_kib``: the transaction log rotation size the server was configured with
    (``graphmem.server.local`` and docker-compose.yml set 128), for ``flush_erased``; None
    when unknown (no log is filled, only a checkpoint asked for).
    """

    def __init__(self, conn: Neo4jConnection, index: Neo4jIndex, log_rotation_kib: int | None = None):
        self.conn = conn
        self.index = index
        self.log_rotation_kib = log_rotation_kib

    def migrate(self) -> tuple[list[str], list[str]]:
        applied, already = self.conn.migrate()
        self.index.ensure()
        return applied, already

    def server(self) -> str:
        version, edition = self.conn.server_version()
        return f"{self.conn.settings.neo4j_uri}: Neo4j {version} {edition}"

    def applied_migrations(self) -> list[str]:
        return [row["id"] for row in self.conn.read("admin/applied_migrations")]

    def pending_migrations(self) -> list[str]:
        done = set(self.applied_migrations())
        return [m.name for m in migrations() if m.number not in done]

    def stored_model(self) -> tuple[str, int] | None:
        return self.index.stored_model()

    def index_problems(self) -> list[str]:
        states = {row["name"]: row["state"] for row in self.conn.read("index/index_states")}
        building = self.index_status().building
        problems = []
        if building:
            problems.append(f"a rebuild to {building} did not finish (run `graphmem index rebuild`)")
        wanted = (*FULLTEXT_INDEXES, index_name(self.index.generation))
        problems += [
            f"{name} missing" if name not in states else f"{name}={states[name]}"
            for name in wanted
            if states.get(name) != "ONLINE"
        ]
        vector = self.conn.read("index/vector_dimension", name=index_name(self.index.generation))
        if vector and self.index.filtered and not vector[0]["filters"]:
            problems.append(
                f"{index_name(self.index.generation)} was made on Neo4j 5.26, without the filter "
                "properties this server searches with (run `graphmem init`)"
            )
        problems += [
            f"{row['units']} unit(s) of scope {row['scope']} have no search entry (run `graphmem index rebuild`)"
            for row in self.conn.read("index/unentered_units")
        ]
        return problems

    def flush_erased(self) -> bool:
        return flush_erased(self.conn, self.log_rotation_kib)

    def index_status(self) -> IndexStatus:
        return IndexStatus.model_validate(self.index.status())

    def close(self) -> None:
        self.conn.close()
