"""Where graphmem keeps its local Neo4j, model files and caches."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_home"]


def default_home() -> Path:
    """``GRAPHMEM_HOME``, else ``~/.cache/graphmem``. Nothing is read from it, or run, unless
    only this user (or root) could have changed it: graphmem.settings.trust."""
    return Path(os.environ.get("GRAPHMEM_HOME", Path.home() / ".cache" / "graphmem"))
