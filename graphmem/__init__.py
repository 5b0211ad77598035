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
    from .api import GraphMem as GraphMem
    from .config import Settings as Settings
    from .errors import GraphMemError as GraphMemError
    from .models import AsOf as AsOf
    from .models import Episode as Episode
    from .models import Fact as Fact
    from .models import MemoryBlock as MemoryBlock
    from .models import MemoryKind as MemoryKind
    from .models import MemoryUnit as MemoryUnit
    from .models import Scope as Scope


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's, so it never drifts from pyproject
        from importlib.metadata import version

        return version("graphmem")
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
