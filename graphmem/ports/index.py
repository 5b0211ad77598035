"""The index port: search over units, derived from the store and rebuildable from it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from graphmem.domain.models import AsOf, Reached, Scope, Scored, SearchRequest, Step
from graphmem.ports.services import Embedder


@runtime_checkable
class MemoryIndex(Protocol):
    """Search over units: derived, rebuilt from the store, never behind it (the store writes
    the entries, ``graphmem.domain.entries``, with their units and edges).

    - a search gives units of the request's scopes only, visible at its (T, S), unarchived, best
      first: a scope's k best, whatever else is stored;
    - lexical search reads plain words: no query syntax, never raises;
    - a question names an entity when it holds every word of its name; else those sharing a word.
    """

    #: What turns text into vectors here; its name and dimension describe the index.
    embedder: Embedder

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """The embeddings of ``texts`` (what writes store with new units), in order."""
        ...

    def recall(self, request: SearchRequest) -> list[Scored]:
        """The ``request.kept`` best units, in one round trip on Neo4j (docs/recall.md).

        - the lists asked for, each ``request.fetch`` deep: semantic, lexical, named-entity,
          time (with a window) and speaker (what someone the question's words name said, tied);
          the first three and time read ``request.asked`` for the names that speak in the scopes;
        - fused (``fusion.rrf``), walked with ``request.hops`` (``fusion.walk``, over ``hop``),
          then gaining for their conversations (``fusion.together``).
        """
        ...

    def hop(self, request: SearchRequest, step: Step) -> list[Reached]:
        """One hop of a walk (see ``Step``): units sharing an entity with the frontier, visible
        at the request's (T, S), at most ``request.fanout`` per entity, best first. An entity
        linked to more than ``fanout`` units, or named by the question (every word of its name
        in ``request.words``), is not walked through."""
        ...

    def search_semantic_many(self, queries: Sequence[str], scope: Scope, k: int, at: AsOf) -> list[list[Scored]]:
        """For each query, the k units nearest by meaning visible at ``at``."""
        ...

    def rebuild(self, scope: Scope | None = None, progress: Callable[[int], None] | None = None) -> int:
        """Recompute every entry from the store (one scope, or all) with the current embedder,
        telling ``progress`` how many more units are done; returns how many were indexed."""
        ...

    def loading(self) -> AbstractContextManager[None]:
        """A bulk load runs in this block. With no search entry stored yet, the vector index may
        be left out while it runs and built once after (faster than entry by entry); it is
        online when the block ends, even when the load failed."""
        ...

    def clear_cache(self) -> None:
        """Drop every text (and vector of a text) kept outside the store: called after an
        erasure, so no cache holds an erased subject's words."""
        ...
