"""The database port: schema, server and index health, as an operator sees them."""

from __future__ import annotations

from typing import Protocol

from graphmem.domain.models import IndexStatus


class Database(Protocol):
    """The database behind a store and its index, as an operator sees it: schema, server and
    index health. A GraphMem over the in-memory adapters has none.

    Every method but ``migrate``, ``flush_erased`` and ``close`` only reads. Each raises
    ``Unavailable`` when the database cannot be reached.
    """

    def migrate(self) -> tuple[list[str], list[str]]:
        """Apply pending numbered schema migrations, then create the search indexes for the
        index's embedder (idempotent). Returns the migration names (applied now, already
        applied). Raises ``IndexMismatch`` when the index was built with another model."""
        ...

    def server(self) -> str:
        """Where the server is and what it runs, on one line."""
        ...

    def applied_migrations(self) -> list[str]:
        """Numbers of the migrations recorded as applied, in order."""
        ...

    def pending_migrations(self) -> list[str]:
        """Names of the migrations not applied yet, in order."""
        ...

    def stored_model(self) -> tuple[str, int] | None:
        """(model name, dimension) the index was built with; None on a fresh database."""
        ...

    def index_problems(self) -> list[str]:
        """One phrase per problem of the search layout: an unfinished rebuild, an index
        missing or not online, units without search entries; [] when there is none."""
        ...

    def flush_erased(self) -> bool:
        """After an erasure: push the deleted values out of the transaction logs
        (``graphmem.adapters.neo4j.admin``). True when the server checkpointed on
        request; False when it checkpoints on its own schedule (Community)."""
        ...

    def index_status(self) -> IndexStatus:
        """The model, dimension and generation the live search entries were built with, the
        model a rebuild builds aside, counts, and the state of each search index."""
        ...

    def close(self) -> None: ...
