"""graphmem: a temporal knowledge and memory service for LLM agents, on Neo4j.

The public names below load lazily, so ``import graphmem.embed`` (or any other submodule)
does not pull in the whole service.
"""

from importlib import import_module
from typing import TYPE_CHECKING

_EXPORTS = {
    "GraphMem": "graphmem.api",
    "Settings": "graphmem.config",
    "GraphMemError": "graphmem.errors",
    "AsOf": "graphmem.models",
    "Episode": "graphmem.models",
    "Fact": "graphmem.models",
    "MemoryBlock": "graphmem.models",
    "MemoryKind": "graphmem.models",
    "MemoryUnit": "graphmem.models",
    "Scope": "graphmem.models",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from .api import GraphMem
    from .config import Settings
    from .errors import GraphMemError
    from .models import AsOf, Episode, Fact, MemoryBlock, MemoryKind, MemoryUnit, Scope


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's, so it never drifts from pyproject
        from importlib.metadata import version

        return version("graphmem")
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
