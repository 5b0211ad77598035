"""The local Neo4j Community server that graphmem provisions from Maven Central and runs itself."""

from graphmem.server.local import LocalNeo4j, Status
from graphmem.settings.credentials import local_password

__all__ = ["LocalNeo4j", "Status", "local_password"]
