"""``graphmem.ports.Database`` on Neo4j: migrations, server version and index health."""

from __future__ import annotations

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex, index_name
from graphmem.adapters.neo4j.migrations import migrations
from graphmem.domain.models import IndexStatus
from graphmem.server.erasure import flush_erased

#: The fulltext indexes recall needs besides the live generation's vector index.
FULLTEXT_INDEXES = ("entity_names", "entry_text")


class Neo4jDatabase:
    """The Neo4j server behind a ``Neo4jStore`` and ``Neo4jIndex`` (see the port)."""

    def __init__(self, conn: Neo4jConnection, index: Neo4jIndex):
        self.conn = conn
        self.index = index

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
        return flush_erased(self.conn)

    def index_status(self) -> IndexStatus:
        return IndexStatus.model_validate(self.index.status())

    def close(self) -> None:
        self.conn.close()
