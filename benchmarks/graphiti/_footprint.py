"""What each system's Neo4j holds after the run (issue 43, item 3): store bytes on disk by kind,
nodes and relationships, and the server's resident memory with its heap and page-cache settings.

BENCHMARK-ONLY RAW CYPHER: the two counts below are inline on purpose (library Cypher lives in
cypher/).
"""

from __future__ import annotations

from pathlib import Path

from neo4j import GraphDatabase

from graphmem.server.local import LocalNeo4j

#: Neo4j grows its store files in large preallocated steps (192 MiB files seen at 100k facts),
#: which would hide a difference of a few hundred bytes a fact: both servers grow them as needed.
NO_PREALLOCATION = "db.store.files.preallocate=false\n"

RAW_NODES = "MATCH (n) RETURN count(n) AS n"
RAW_RELATIONSHIPS = "MATCH ()-[r]->() RETURN count(r) AS n"


class MeasuredNeo4j(LocalNeo4j):
    """A local server whose store files hold what it wrote, not a preallocated step more."""

    def config_text(self) -> str:
        return super().config_text() + NO_PREALLOCATION


def _kind(path: Path, database: Path) -> str:
    """The part of the store a file belongs to: an index by its provider (schema/index/<provider>/),
    the string and array property stores (long texts, vectors), or the fixed-size records."""
    parts = path.relative_to(database).parts
    if parts[0] == "schema":
        return f"index:{parts[2].split('-')[0]}" if len(parts) > 2 and parts[1] == "index" else "schema"
    if path.name.startswith("neostore.propertystore.db.strings"):
        return "strings"
    if path.name.startswith("neostore.propertystore.db.arrays"):
        return "arrays"
    return "records"


def store_bytes(server: LocalNeo4j) -> dict[str, int]:
    """Bytes on disk of the user database's store files by kind, and their total. The
    transaction logs live apart (data/transactions/) and are not counted."""
    database = server.instance_dir / "data" / "databases" / "neo4j"
    sizes: dict[str, int] = {}
    for path in database.rglob("*"):
        if path.is_file():
            kind = _kind(path, database)
            sizes[kind] = sizes.get(kind, 0) + path.stat().st_size
    return dict(sorted(sizes.items())) | {"total": sum(sizes.values())}


def _status_mb(pid: int | None, key: str) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def footprint(server: LocalNeo4j, units: int) -> dict:
    """The server's RSS now and at its peak, its counts, then its store after a checkpoint.

    Community has no ``db.checkpoint()`` procedure; a clean shutdown checkpoints on every
    edition, so the server is stopped before its files are measured (the caller restarts it
    if it is still needed)."""
    pid = server.status().pid
    driver = GraphDatabase.driver(server.uri, auth=("neo4j", server.password or ""))
    try:
        with driver.session() as session:
            nodes = session.run(RAW_NODES).single()["n"]
            relationships = session.run(RAW_RELATIONSHIPS).single()["n"]
    finally:
        driver.close()
    out = {
        "rss_mb": _status_mb(pid, "VmRSS:"),
        "peak_rss_mb": _status_mb(pid, "VmHWM:"),
        "heap": server.heap,
        "pagecache": server.pagecache,
        "nodes": nodes,
        "relationships": relationships,
    }
    server.stop()
    out["store_bytes"] = store_bytes(server)
    out["store_bytes_per_unit"] = out["store_bytes"]["total"] / units
    return out
