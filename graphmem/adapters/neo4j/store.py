"""MemoryStore on Neo4j (``graphmem.ports``), one part per port.

Graph shape:
    (Episode)-[:DERIVED]->(Unit)-[:ABOUT {role}]->(Entity)
    (Episode)-[:DECIDED]->(Decision)-[:TARGET|PRODUCED]->(Unit)
    (Decision)-[:INVALIDATES {expired_at, invalid_at, reason, decision_id}]->(Unit)
    (:Episode:Undecided {place})    stored by a write whose commit has not decided it yet

Every node carries ``scope`` (the scope key) plus ``subject_type``/``subject_id``/``project_id``
so erasure is one indexed filter. Units are created once and never SET again: recall statistics
and archive state live on a Usage node beside the unit, and invalidation is an edge from the
decision that made it. Rows and records are shaped in ``graphmem.adapters.neo4j.rows``.
"""

from __future__ import annotations

from graphmem.adapters.neo4j.audit import Neo4jAudit
from graphmem.adapters.neo4j.blocks import Neo4jBlocks
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.episodes import Neo4jEpisodes
from graphmem.adapters.neo4j.erasure import Neo4jErasure
from graphmem.adapters.neo4j.exchange import Neo4jExchange
from graphmem.adapters.neo4j.jobs import Neo4jJobs
from graphmem.adapters.neo4j.keys import Neo4jKeys
from graphmem.adapters.neo4j.timelines import Neo4jTimelines
from graphmem.adapters.neo4j.units import Neo4jUnits

__all__ = ["Neo4jStore"]


class Neo4jStore(
    Neo4jEpisodes,
    Neo4jUnits,
    Neo4jTimelines,
    Neo4jAudit,
    Neo4jErasure,
    Neo4jBlocks,
    Neo4jExchange,
    Neo4jKeys,
    Neo4jJobs,
):
    """MemoryStore on a Neo4j database (see ``graphmem.ports.MemoryStore``)."""

    def __init__(self, conn: Neo4jConnection):
        self.conn = conn
