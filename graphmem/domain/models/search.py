"""What one recall asks of the index (``SearchRequest``), the hop of a walk (``Step``), and what
comes back (``Scored``, ``Reached``, ``Hit``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from pydantic import Field

from graphmem.domain.limits import MAX_HOPS, MAX_K
from graphmem.domain.models.base import AsOf, Model, UTCDatetime
from graphmem.domain.models.scope import MemoryKind, Scope
from graphmem.domain.models.units import MemoryUnit

#: The entities the named-entity list reads per question and the units a walk's hop starts
#: from, by default: 3, measured against 5 over the same stores (MuSiQue hybrid+hops2 R@5 half
#: A 0.753 / 0.718, all-supports@10 half A 0.640 / 0.640 and half B 0.600 / 0.560; LoCoMo
#: within 0.01 everywhere), and a hop reads ~40% fewer units.
SEEDS = 3
#: Names of a question that may leave it when they are speakers (``Unnamed``): every set of
#: them is embedded, so a few.
UNNAMED = 2


class Hit(Model):
    id: str
    score: float


class Unnamed(Model):
    """The question without some of the names it holds (``names``, by norm): what the lists
    read when exactly those names are people who speak in the scopes. "What books has Melanie
    read?" then reads "What books has read?", and the speaker list says who: her name would
    rank what was said to her, and every line of hers alike."""

    names: tuple[str, ...]
    vector: list[float] | None = None
    terms: tuple[str, ...] | None = None


class SearchRequest(Model):
    """What one recall asks of the index: candidates from each ranked list, visible at ``at``
    in ``scopes`` (of ``kinds``, when given), fused by reciprocal rank fusion. With ``during``,
    a unit is visible when it is true at some world time in [start, end) as known at
    ``at.known`` (a question that names a time and no as-of point)."""

    scopes: tuple[Scope, ...]
    at: AsOf
    during: tuple[UTCDatetime, UTCDatetime] | None = None
    #: A time the question names: a list of units true or told near it, closest first.
    window: tuple[UTCDatetime, UTCDatetime] | None = None
    #: The question asks what happened in the window: in its time list, what began inside the
    #: window comes before states that merely hold into it (``graphmem.domain.entries.nearness``).
    began_first: bool = False
    #: How many best units the fusion and the walk rank (twice what a recall may return), of
    #: which the ``kept`` best are returned once each gains for the others told in its
    #: conversation (``graphmem.domain.fusion.together``).
    k: Annotated[int, Field(ge=1, le=2 * MAX_K)]
    keep: Annotated[int, Field(ge=1, le=MAX_K)] | None = None
    #: How deep each list is read before fusion.
    fetch: Annotated[int, Field(ge=1)]
    kinds: tuple[MemoryKind, ...] = ()
    #: The question's embedding (None: no semantic list).
    vector: list[float] | None = None
    #: Words for the lexical list (None: no lexical list).
    terms: tuple[str, ...] | None = None
    #: Every word of the question, to find the entities it names (None: no entity list).
    words: tuple[str, ...] | None = None
    #: Names the question writes (norms, at most ``UNNAMED``) that may be speakers, and
    #: the question without each non-empty set of them (``Unnamed``).
    names: tuple[str, ...] = ()
    unnamed: tuple[Unnamed, ...] = ()
    rrf_k: Annotated[int, Field(ge=1)] = 1
    #: Weight of each list in the fusion, by name: semantic, lexical, entities, time, speaker;
    #: and of the question's similarity (``graphmem.domain.fusion.similar``) and a walk's paths.
    weights: dict[str, float] = Field(default_factory=dict)
    #: Entities read per question and units read per entity; units a hop starts from.
    seeds: int = SEEDS
    fanout: int = 50
    #: Hops of the walk from the best hits (``graphmem.domain.fusion.walk``), the units a hop
    #: returns, and how much less each hop deeper counts.
    hops: Annotated[int, Field(ge=0, le=MAX_HOPS)] = 0
    frontier: Annotated[int, Field(ge=1)] = 20
    hop_decay: float = 0.5

    @property
    def kept(self) -> int:
        """How many units the recall returns: ``keep``, else ``k``."""
        return min(self.keep or self.k, self.k)

    @property
    def depth(self) -> int:
        """How many fused units a walk starts from and adds to (at most ``MAX_K``): a unit
        reached by a path also scores its own fused score when the question found it below the
        top k."""
        return min(MAX_K, max(self.k, self.fetch)) if self.hops else self.k

    @property
    def pool(self) -> int:
        """How many of the best fused units (at most ``MAX_K``) the question's similarity
        re-scores (``graphmem.domain.fusion.similar``) before the ``depth`` best are kept."""
        return min(MAX_K, max(self.depth, self.fetch))

    def asked(self, speakers: Iterable[str]) -> tuple[list[float] | None, tuple[str, ...] | None]:
        """The vector and terms the lists read when ``speakers`` (norms) speak in the scopes:
        the question without those of its ``names``, else the whole question."""
        key = tuple(sorted(set(self.names) & set(speakers)))
        for u in self.unnamed:
            if key and u.names == key:
                return u.vector, u.terms
        return self.vector, self.terms


class Scored(Model):
    """A unit found by a search, as seen at the request's system time, with its fused score;
    a unit a walk reached (``hop`` > 0) carries its ``path``: unit contents and the names of
    the entities between them, from a direct hit to it."""

    unit: MemoryUnit
    score: float
    hop: int = 0
    path: tuple[str, ...] = ()
    #: The question's similarity with the unit ((1 + cos) / 2) when fusion read it: a direct
    #: hit among the fused units it re-scores (``graphmem.domain.fusion.similar``), with a vector.
    similarity: float | None = None


class Step(Model):
    """One hop of a walk: from the ``frontier`` units through the entities they are about or
    name, to units not in ``seen``; the ``limit`` best paths come back (see ``Reached``). When
    two frontier units reach each other, only the better of the two paths counts: a hit is not
    explained by the hit it explains."""

    frontier: tuple[str, ...]
    #: For each frontier unit, the name of the entity the walk reached it through (None for a
    #: direct hit): a path crosses an entity once, so the hop does not go back through it.
    through: tuple[str | None, ...] = ()
    seen: frozenset[str] = frozenset()
    limit: int


class Reached(Model):
    """A unit one hop away from ``source`` through the entity ``via``, as seen at the request's
    system time. ``similarity``: the cosine between the question and the path (the sum of the
    two units' vectors; None without vectors); ``score``: that times the entity's specificity
    (1 / log2(1 + units linked to it)), what paths are ranked by."""

    source: str
    via: str
    unit: MemoryUnit
    score: float
    similarity: float | None = None
