"""``GraphMem``: the facade, composed of its groups of methods, opened on Neo4j or given parts."""

from __future__ import annotations

from typing import Any

from graphmem.api.arguments import checked
from graphmem.api.listing import Listing
from graphmem.api.operating import Operating
from graphmem.api.writing import Writing
from graphmem.ports import Embedder
from graphmem.settings.config import Settings


@checked
class GraphMem(Writing, Listing, Operating):
    """Temporal memory for one process: write, recall, assemble, audit, list (``Listing`` holds
    the reads too)."""

    @classmethod
    def connect(
        cls,
        settings: Settings | None = None,
        migrate: bool = True,
        embedder: Embedder | None = None,
        check_index: bool = True,
        **kwargs: Any,
    ) -> GraphMem:
        """Connect to Neo4j (``NEO4J_*`` settings, default: the local server), apply pending
        migrations, and check the index was built with this embedder (``settings.embedder``
        unless an Embedder object is given). Keyword arguments go to ``GraphMem(...)``; the
        policy and extractors not given are those ``settings`` name. See
        ``graphmem.api.wiring.connect``."""
        from graphmem.api import wiring  # here, not above: it loads the Neo4j driver and adapters

        parts = wiring.connect(
            settings,
            migrate=migrate,
            check_index=check_index,
            embedder=embedder,
            with_policy="policy" not in kwargs,
            with_extractors="extractors" not in kwargs,
        )
        return cls(**{**vars(parts), **kwargs})

    def close(self) -> None:
        """Write what the usage log holds and close the database connection, if any."""
        self.usage.close()
        if self.database is not None:
            self.database.close()

    def __enter__(self) -> GraphMem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
