"""graphmem: a temporal knowledge and memory service for LLM agents, on Neo4j.

The public names below load lazily, so ``import graphmem.embed`` (or any other submodule)
does not pull in the whole service.
"""

from importlib import import_module
from typing import TYPE_CHECKING

_EXPORTS = {
    "GraphMem": "graphmem.api",
    "Settings": "graphmem.settings.config",
    "GraphMemError": "graphmem.errors",
    "AsOf": "graphmem.domain.models",
    "Episode": "graphmem.domain.models",
    "Fact": "graphmem.domain.models",
    "MemoryBlock": "graphmem.domain.models",
    "MemoryKind": "graphmem.domain.models",
    "MemoryUnit": "graphmem.domain.models",
    "Scope": "graphmem.domain.models",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from graphmem.api import GraphMem as GraphMem
    from graphmem.domain.models import AsOf as AsOf
    from graphmem.domain.models import Episode as Episode
    from graphmem.domain.models import Fact as Fact
    from graphmem.domain.models import MemoryBlock as MemoryBlock
    from graphmem.domain.models import MemoryKind as MemoryKind
    from graphmem.domain.models import MemoryUnit as MemoryUnit
    from graphmem.domain.models import Scope as Scope
    from graphmem.errors import GraphMemError as GraphMemError
    from graphmem.settings.config import Settings as Settings


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's, so it never drifts from pyproject
        from importlib.metadata import version

        return version("graphmem")
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
