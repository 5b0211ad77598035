"""The records an ``InMemoryStore`` holds, and the operations on them it shares with its exchange,
its erasure and the ``InMemoryIndex`` built on it.

Internal to ``graphmem.adapters.memory``. Whoever reads or writes the tables holds ``Tables.lock``
(a reentrant lock) meanwhile; the methods here expect it held.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from graphmem.adapters.memory.scoped import SEEN_KINDS, ScopeIndex, ScopeView
from graphmem.domain.mentions import named_in
from graphmem.domain.models import (
    ApiKey,
    Appended,
    AssembleTrace,
    Decision,
    Deletion,
    Entity,
    Episode,
    Erasure,
    Invalidation,
    Job,
    MemoryBlock,
    MemoryUnit,
    ReviewItem,
    Scope,
    WriteBatch,
    entity_id,
    normalise,
)

#: An episode's key, (scope key, episode id): an episode id belongs to its scope.
EpisodeKey = tuple[str, str]


class Mention(NamedTuple):
    """A name a text holds, as written, and how it holds it (``graphmem.domain.mentions``)."""

    name: str
    kind: str


#: The names a text holds, by norm.
Mentions = dict[str, Mention]


class Recalls(NamedTuple):
    """When a unit was last recalled, and how often: kept beside the units, never on them."""

    last: datetime
    times: int


class Version(NamedTuple):
    """How many commits changed a scope's names (or its texts), and the key of the last one."""

    number: int
    last: str | None


class Place(NamedTuple):
    """Where an episode stored undecided was written: which ``put_episodes`` call, at which place."""

    write: int
    position: int


@dataclass
class Tables:
    """Every record of one in-memory store, each kind in its own table."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    episodes: dict[EpisodeKey, Episode] = field(default_factory=dict)
    units: dict[str, MemoryUnit] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    edges: list[Invalidation] = field(default_factory=list)
    traces: dict[str, AssembleTrace] = field(default_factory=dict)
    #: trace id -> the score of each recalled unit, by rank.
    trace_scores: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    #: (scope key, label) -> block.
    blocks: dict[tuple[str, str], MemoryBlock] = field(default_factory=dict)
    #: unit id -> its recalls.
    usage: dict[str, Recalls] = field(default_factory=dict)
    #: unit id -> when it was archived.
    archived: dict[str, datetime] = field(default_factory=dict)
    deletions: dict[str, Deletion] = field(default_factory=dict)
    #: The embedding of each unit's content (its search entries are derived from the unit and
    #: its edges when searched, so they are always what the store says).
    vectors: dict[str, list[float]] = field(default_factory=dict)
    #: The names each unit (by id) and episode (by key) holds.
    unit_mentions: dict[str, Mentions] = field(default_factory=dict)
    episode_mentions: dict[EpisodeKey, Mentions] = field(default_factory=dict)
    #: The names version of each scope (``UnitStore.known_names``) and its texts version
    #: (``UnitStore.earlier_texts``).
    names: dict[Scope, Version] = field(default_factory=dict)
    texts: dict[Scope, Version] = field(default_factory=dict)
    #: The episodes stored undecided, until a commit decides them.
    undecided: dict[EpisodeKey, Place] = field(default_factory=dict)
    writes: int = 0  # calls of put_episodes so far
    reviews: dict[str, ReviewItem] = field(default_factory=dict)
    keys: dict[str, ApiKey] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    #: Erasure records by id, keyed by HMACs under the store's own secret.
    erasures: dict[str, Erasure] = field(default_factory=dict)
    #: What a write reads of each scope (``scoped``), kept as records are added.
    scoped: ScopeIndex = field(default_factory=ScopeIndex, repr=False)
    #: ``edges`` by unit id, as of the first ``_indexed`` edges of the list ``_indexed_in``.
    _by_unit: dict[str, list[Invalidation]] = field(default_factory=dict, repr=False)
    _indexed_in: list[Invalidation] | None = field(default=None, repr=False)
    _indexed: int = field(default=0, repr=False)

    def edges_to(self, unit_id: str) -> list[Invalidation]:
        """The edges to a unit, in storage order. ``edges`` is only ever extended or replaced
        whole, so an index of it catches up with what was added (a scan of every edge per
        unit made a write of a large store quadratic)."""
        if self._indexed_in is not self.edges or self._indexed > len(self.edges):
            self._by_unit, self._indexed_in, self._indexed = {}, self.edges, 0
        for edge in self.edges[self._indexed :]:
            self._by_unit.setdefault(edge.unit_id, []).append(edge)
        self._indexed = len(self.edges)
        return self._by_unit.get(unit_id, [])

    def view(self, scope: Scope) -> ScopeView:
        """The scope's records as a write reads them (``ScopeIndex``)."""
        return self.scoped.view(scope, self.units, self.decisions, self.episodes, self._mentions)

    def _mentions(self) -> Iterator[tuple[Scope, Iterable[tuple[str, str]]]]:
        owners: list[tuple[MemoryUnit | Episode | None, Mentions]] = [
            (self.units.get(k), names) for k, names in self.unit_mentions.items()
        ]
        owners += [(self.episodes.get(k), names) for k, names in self.episode_mentions.items()]
        for owner, names in owners:
            if owner is not None:
                yield owner.scope, names.values()

    def append(self, episodes: Sequence[Episode], undecided: bool) -> Appended:
        """Store the episodes not stored yet (``EpisodeStore.put_episodes``), ``undecided`` or not."""
        new, conflicts = 0, []
        self.writes += 1
        for position, episode in enumerate(episodes):
            key = (episode.scope.key, episode.id)
            existing = self.episodes.get(key)
            if existing is None:
                self.episodes[key] = episode.model_copy(update={"derived_ids": ()})
                if undecided:
                    self.undecided[key] = Place(self.writes, position)
                new += 1
            elif existing.fingerprint != episode.fingerprint:
                conflicts.append(position)
        return Appended(new=new, conflicts=tuple(conflicts))

    def recalls(self, unit_id: str) -> tuple[datetime | None, int]:
        """When the unit was last recalled (None: never) and how often."""
        recalls = self.usage.get(unit_id)
        return (None, 0) if recalls is None else recalls

    def texts_changed(self, scope: Scope) -> None:
        """Count a change to which texts ``earlier_texts`` finds made outside a commit, as
        ``Neo4jStore`` counts it."""
        version = self.texts.get(scope, Version(0, None))
        self.texts[scope] = Version(version.number + 1, None)

    def texts_of(self, scope: Scope) -> tuple[dict[str, str], dict[str, str]]:
        """The texts of the scope's units and of its episodes, by id: what a name may link."""
        view = self.view(scope)
        return dict(view.unit_texts), dict(view.episode_texts)

    def mention(self, scope: Scope, batch: WriteBatch) -> None:
        """Link the batch's mentions, and those of earlier units and episodes that name what it
        makes known."""
        tables: tuple[tuple[dict[Any, Mentions], Callable[[str], Any]], ...] = (
            (self.unit_mentions, lambda owner: owner),
            (self.episode_mentions, lambda owner: (scope.key, owner)),
        )
        for (owners, key), mentioned in zip(tables, (batch.unit_mentions, batch.episode_mentions)):
            for owner, names in mentioned.items():
                owners.setdefault(key(owner), {}).update({normalise(n): Mention(n, kind) for n, kind in names})
                self.scoped.see(scope, names)
        if not batch.anchors:
            return
        read = batch.texts_read
        units, episodes = (read.found, read.episodes) if read else self.texts_of(scope)
        stored = ({u for u in units if u in self.units}, {e for e in episodes if (scope.key, e) in self.episodes})
        for (owners, key), texts, present, new in zip(
            tables, (units, episodes), stored, (batch.unit_mentions, batch.episode_mentions)
        ):
            for owner, names in named_in(batch.anchors, texts).items():
                if owner in present and owner not in new:
                    for name, kind in names:
                        owners.setdefault(key(owner), {}).setdefault(normalise(name), Mention(name, kind))

    def name_entities(self, units: Iterable[MemoryUnit]) -> None:
        """Store the entities the units are about that are not stored yet, named as the first
        unit writes them."""
        for u in units:
            for name in (u.triple.subject, u.triple.object) if u.triple else ():
                if name:
                    eid = entity_id(u.scope, name)
                    self.entities.setdefault(
                        eid,
                        Entity(id=eid, scope=u.scope, name=name, norm=normalise(name), created_at=u.time.created_at),
                    )

    def facts(self, scope: Scope) -> set[str]:
        """Names of the entities the scope's facts are about."""
        return set(self.view(scope).facts)

    def seen(self, scope: Scope) -> set[str]:
        """Names a text of the scope writes as a proper name or a speaker."""
        return {
            name
            for owner_scope, names in self._mentions()
            if owner_scope == scope
            for name, kind in names
            if kind in SEEN_KINDS
        }

    def named(self, unit: MemoryUnit) -> dict[str, str]:
        """The entities a unit is about or names: norm -> name."""
        found = {normalise(n): n for n in ((unit.triple.subject, unit.triple.object) if unit.triple else ()) if n}
        for norm, mention in self.unit_mentions.get(unit.id, {}).items():
            found.setdefault(norm, mention.name)
        return found
