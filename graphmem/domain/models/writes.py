"""What one write commits atomically (``WriteBatch``), what it read to plan it (the version
reads a commit checks under the scope's names lock), and what deleting an episode rewrites."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping
from typing import Annotated, Any

from pydantic import Field

from graphmem.domain.models.base import Model, UTCDatetime
from graphmem.domain.models.decisions import Decision, Invalidation
from graphmem.domain.models.episodes import ReviewItem
from graphmem.domain.models.units import MemoryUnit


class VersionRead(Model):
    """A count a plan read of the scope's commits of one kind (kept on its names lock), with the
    key of the last one counted; ``ahead``, the key of the commit of the same pipeline that was
    pending then, whose changes the plan includes."""

    version: Annotated[int, Field(ge=0)]
    last: str | None = None
    ahead: str | None = None

    def stands(self, version: int, last: str | None) -> bool:
        """Whether the count is now ``version``, its last commit ``last``, with no commit other
        than ``ahead`` counted since the read."""
        return version == self.version or (
            version == self.version + 1 and self.ahead is not None and last == self.ahead
        )


class NamesRead(VersionRead):
    """What a write's mention links were drawn against: the scope's names version (how many
    commits have made names known in it) and the digest of the last such commit's names
    (``graphmem.domain.mentions.digest``), read before its known names; ``ahead``, the digest of the
    names of the pending commit, which the links include."""

    def outdated(self, version: int, last: str | None) -> bool:
        """Whether a commit other than ``ahead`` made names known since: the links must then
        be drawn again."""
        return not self.stands(version, last)


class TextsRead(VersionRead):
    """The stored texts that name what a write makes known, found while it was planned
    (``UnitStore.earlier_texts``) so that its commit need not search. ``version`` counts the
    commits that changed which texts a search finds and ``last`` is the last one's key
    (``WriteBatch.texts_key``), both read before the texts; ``ahead`` is the pending commit's key.
    The texts stand (``stands``) while no other commit changed them."""

    #: Unit id -> text; its commit keeps those that name what it makes known then. The pending
    #: commit's new units are among them.
    found: dict[str, str] = Field(default_factory=dict)
    #: Episode id -> raw text, the same of the scope's episodes (those of the pending commit,
    #: stored before it was planned, are found as they are).
    episodes: dict[str, str] = Field(default_factory=dict)


#: Draws a write's mention links again with a reader of the scope's known names (norms -> name
#: -> made a name by a fact) as its commit sees them: the batch's new ``unit_mentions``,
#: ``episode_mentions`` and ``anchors`` (``UnitStore.commit``).
Relink = Callable[[Callable[[Collection[str]], dict[str, bool]]], Mapping[str, object]]


class WriteBatch(Model):
    """Everything one write commits atomically: new units, the decisions that produced or
    targeted them, the invalidation edges those decisions write, and candidates held for review.

    ``guards`` maps each timeline group the batch decided on to the length of its log (its
    decisions with an event) as read before deciding; the commit fails with ``Conflict`` when
    another writer changed one since (optimistic concurrency enforced by the store, so
    concurrent writers cannot both add the same current fact).
    """

    units: tuple[MemoryUnit, ...] = ()
    decisions: tuple[Decision, ...] = ()
    invalidations: tuple[Invalidation, ...] = ()
    reviews: tuple[ReviewItem, ...] = ()
    guards: dict[str, int] = Field(default_factory=dict)
    #: Archived units a write of their fact makes searchable again.
    unarchive: tuple[str, ...] = ()
    #: The embedding of each new unit's content: its search entries are written in the same
    #: transaction (``graphmem.domain.entries``).
    vectors: dict[str, list[float]] = Field(default_factory=dict)
    #: The embedding model of ``vectors``: a store whose live index has another model refuses.
    vector_model: str | None = None
    #: The entities each new unit and episode names (``graphmem.domain.mentions``), by owner id:
    #: derived links written with them, as (name, kind) pairs.
    unit_mentions: dict[str, tuple[tuple[str, str], ...]] = Field(default_factory=dict)
    episode_mentions: dict[str, tuple[tuple[str, str], ...]] = Field(default_factory=dict)
    #: Names this write makes known in the scope, each with whether a fact makes it a name
    #: (found case-folded) or a text named it (found where written with a capital): earlier
    #: units that name them are linked to them too, so links do not depend on arrival order.
    anchors: tuple[tuple[str, bool], ...] = ()
    #: What the mention links were drawn against: a commit that finds names made known since
    #: by another writer draws them again, holding the scope's names (``UnitStore.commit``).
    names_read: NamesRead | None = None
    #: The earlier texts naming ``anchors``, found while planning; a commit searches itself
    #: when there are none or they no longer stand (``TextsRead.stands``).
    texts_read: TextsRead | None = None
    #: The episodes this batch decides (every candidate of theirs, or none was extracted):
    #: stored undecided (``EpisodeStore.put_episodes``), they stop being so with its commit.
    decided: tuple[str, ...] = ()
    #: What a store made ready for this batch's commit ahead of it (``UnitStore.stage``),
    #: opaque to all else (not dumped, not shown).
    staged: Any = Field(default=None, exclude=True, repr=False)

    @property
    def texts_key(self) -> str | None:
        """What the scope's texts version records of this commit when it changes which texts a
        search finds: its new units' and episodes' ids as a short fingerprint (one a later plan
        can know: ``TextsRead.ahead``), or None when it unarchives units, whose texts that plan
        lacks."""
        if not self.changes_texts or self.unarchive:
            return None
        ids = sorted(f"unit:{u.id}" for u in self.units) + sorted(f"episode:{e}" for e in self.episode_mentions)
        return hashlib.sha256(" ".join(ids).encode()).hexdigest()[:32]

    @property
    def changes_texts(self) -> bool:
        """Whether the commit changes which texts a search for names finds: it adds units or
        episodes (``episode_mentions`` holds every new episode), or unarchives units."""
        return bool(self.units or self.episode_mentions or self.unarchive)

    def held(
        self,
        names: tuple[int, str | None],
        texts: tuple[int, str | None],
        relink: Relink | None,
        known_names: Callable[[Collection[str]], dict[str, bool]],
    ) -> WriteBatch:
        """This batch as its commit writes it, holding the scope's names lock, under which it
        found the names and texts versions (with their last commits) ``names`` and ``texts``:

        - its links drawn again by ``relink`` with ``known_names`` when another writer made
          names known since they were drawn (``NamesRead.outdated``);
        - without ``texts_read`` when that no longer stands (``TextsRead.stands``): the commit
          searches the texts itself.

        So the links of two writers never miss each other."""
        batch = self
        if batch.texts_read is not None and not batch.texts_read.stands(*texts):
            batch = batch.model_copy(update={"texts_read": None})
        if relink is None or batch.names_read is None or not batch.names_read.outdated(*names):
            return batch
        return batch.model_copy(update=relink(known_names))


class Rewrite(Model):
    """What re-deriving timelines after an episode deletion changes, applied atomically with
    the deletion: records to drop and records to add (units, decisions, edges)."""

    drop_units: tuple[str, ...] = ()
    #: Edges to drop, by (unit id, decision id, expired_at): one decision may hang several
    #: edges on one unit, at different system times.
    drop_edges: tuple[tuple[str, str, UTCDatetime], ...] = ()
    add: WriteBatch = Field(default_factory=lambda: WriteBatch())
    #: Kept units whose edges changed: their search entries are recomputed.
    respan: tuple[str, ...] = ()
