"""The search index as an operator sees it: each index's state, and what its entries were built with."""

from __future__ import annotations

from graphmem.domain.models.base import Model


class IndexState(Model):
    """One search index as the server reports it."""

    name: str
    type: str
    state: str
    populationPercent: float | None = None


class IndexStatus(Model):
    """The live search entries: the model, dimension and generation they were built with
    (None on a fresh database), the model a rebuild builds aside, the embedder configured now,
    counts, and each search index's state."""

    model: str | None = None
    dimension: int | None = None
    generation: int | None = None
    building: str | None = None
    embedder: dict[str, str | int]
    units: int = 0
    #: Units with an entry open now (searchable at the present system time).
    searchable_units: int = 0
    entries: int = 0
    entities: int = 0
    indexes: tuple[IndexState, ...] = ()
