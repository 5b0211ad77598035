"""The mention links of texts written together: which entities they name, and which names they
make known (docs/recall.md, "Mention links")."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from graphmem.domain.mentions import KnownNames, mentions, written
from graphmem.domain.models import Episode, MemoryUnit, NamesRead, Scope, normalise
from graphmem.pipelines.write.pipelining import NO_COMMIT_IN_FLIGHT, CommitInFlight
from graphmem.ports import UnitStore

#: Reads the names a scope knows that texts hold: name -> whether a fact makes it a name.
KnownNamesReader = Callable[[Collection[str]], dict[str, bool]]


def mention_links(
    store: UnitStore,
    scope: Scope,
    units: Sequence[MemoryUnit],
    episodes: Sequence[Episode],
    in_flight: CommitInFlight = NO_COMMIT_IN_FLIGHT,
) -> dict[str, Any]:
    """The ``WriteBatch`` fields of the mention links of units and episodes written together (a
    write's new ones, or an import's): ``drawn_links`` as the scope knows its names now, and
    what that was read against (``names_read``)."""
    if not units and not episodes:
        return {}
    read: NamesRead | None = None

    def known_names(texts: Collection[str]) -> dict[str, bool]:
        nonlocal read
        # Read while the batch before may commit: what it makes known is added.
        names, known = store.known_names(scope, texts)
        read = names.model_copy(update={"ahead": in_flight.names_digest(scope)})
        for name, fact in in_flight.known(scope, texts).items():
            known[name] = known.get(name, False) or fact
        return known

    links = drawn_links(known_names, units, episodes)
    return {**links, "names_read": read}


def drawn_links(
    known_names: KnownNamesReader, units: Sequence[MemoryUnit], episodes: Sequence[Episode]
) -> dict[str, Any]:
    """The entities the units and episodes name (``graphmem.domain.mentions``), and the names
    they make known, for earlier texts (``anchors``).

    - Named: speakers and proper names as written, and the names the scope knows
      (``known_names`` of their texts), these included.
    - A unit does not mention the names of its own fact.
    """
    texts = sorted({u.content for u in units} | {e.raw for e in episodes})
    known = known_names(texts)
    facts = {n for u in units if u.triple for n in (u.triple.subject, u.triple.object) if n}
    shown = {text: written(text) for text in texts}  # read once, matched twice
    seen = {m.name for text in texts for m in mentions(text, shown=shown[text]) if m.kind in ("proper", "speaker")}
    names = KnownNames(
        facts=[*(n for n, fact in known.items() if fact), *facts],
        seen=[*(n for n, fact in known.items() if not fact), *seen],
    )
    found = {text: mentions(text, names, shown=shown[text]) for text in texts}

    def named(text: str, about: AbstractSet[str] = frozenset()) -> tuple[tuple[str, str], ...]:
        return tuple((m.name, m.kind) for m in found[text] if m.norm not in about)

    was_fact = {normalise(n) for n, fact in known.items() if fact}
    was_known = {normalise(n) for n in known} | {normalise(n) for n in facts}
    anchors = {normalise(n): (n, True) for n in facts if normalise(n) not in was_fact}
    anchors.update({normalise(n): (n, False) for n in seen if normalise(n) not in was_known})
    return {
        "unit_mentions": {
            u.id: named(
                u.content, {normalise(n) for n in (u.triple.subject, u.triple.object) if n} if u.triple else set()
            )
            for u in units
        },
        "episode_mentions": {e.id: named(e.raw) for e in episodes},
        "anchors": tuple(sorted(anchors.values())),
    }
