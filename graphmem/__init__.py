"""graphmem: a temporal knowledge and memory service for LLM agents, on Neo4j."""

from .api import GraphMem
from .config import Settings
from .errors import GraphMemError
from .models import AsOf, Episode, Fact, MemoryBlock, MemoryKind, MemoryUnit, Scope

__all__ = [
    "AsOf",
    "Episode",
    "Fact",
    "GraphMem",
    "GraphMemError",
    "MemoryBlock",
    "MemoryKind",
    "MemoryUnit",
    "Scope",
    "Settings",
]
