"""What a write reads of one scope of an in-memory store, indexed as records are added: its
units and decisions by timeline group, the names it knows, and its texts by word. A write's
reads then cost what they find; a scan of the whole store per write made a large write, such
as a bulk load, quadratic (docs/benchmarks.md, "Bulk loads").

Internal to ``graphmem.adapters.memory``; the caller holds ``Tables.lock``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice

from graphmem.domain.entries import unit_text
from graphmem.domain.mentions import NameIndex
from graphmem.domain.mentions.known import name_words, text_words
from graphmem.domain.models import Decision, Episode, MemoryUnit, Scope

#: The kinds of mention that make a name known to its scope (``Tables.seen``).
SEEN_KINDS = ("proper", "speaker")


@dataclass
class ScopeView:
    """One scope's records as a write reads them."""

    units: dict[str, MemoryUnit] = field(default_factory=dict)
    decisions: set[str] = field(default_factory=set)
    #: The episodes a decision was made for.
    decided: set[str] = field(default_factory=set)
    #: timeline group -> its units' ids, and the decisions that entered its log (in storage order).
    group_units: dict[str, list[str]] = field(default_factory=dict)
    group_events: dict[str, list[Decision]] = field(default_factory=dict)
    #: The texts a name may link (``Tables.texts_of``), by owner id, and the owners of each word.
    unit_texts: dict[str, str] = field(default_factory=dict)
    episode_texts: dict[str, str] = field(default_factory=dict)
    unit_words: dict[str, set[str]] = field(default_factory=dict)
    episode_words: dict[str, set[str]] = field(default_factory=dict)
    #: Known names (``UnitStore.known_names``): True when a fact is about it.
    names: NameIndex[bool] = field(default_factory=NameIndex)
    facts: set[str] = field(default_factory=set)

    def add_unit(self, unit: MemoryUnit) -> None:
        self.units[unit.id] = unit
        if unit.group:
            self.group_units.setdefault(unit.group, []).append(unit.id)
        text = self.unit_texts[unit.id] = unit_text(unit.content, unit.summary)
        _index_words(self.unit_words, unit.id, text)
        for name in (unit.triple.subject, unit.triple.object) if unit.triple else ():
            if name:
                self.facts.add(name)
                self.names.add(name, True)

    def add_decision(self, decision: Decision) -> None:
        self.decisions.add(decision.id)
        if decision.episode_id is not None:
            self.decided.add(decision.episode_id)
        if decision.event is not None:
            self.group_events.setdefault(decision.event.group, []).append(decision)

    def add_episode(self, episode: Episode) -> None:
        text = self.episode_texts[episode.id] = episode.raw
        _index_words(self.episode_words, episode.id, text)

    def see(self, names: Iterable[str]) -> None:
        """Names a text of the scope writes as a proper name or a speaker."""
        for name in names:
            if name not in self.facts:
                self.names.add(name, False)

    def naming(self, anchors: Sequence[tuple[str, bool]], texts: str) -> dict[str, str]:
        """The unit (``texts="unit"``) or episode texts that hold every word of one of the
        anchors' names: those that may name it (``named_in`` then reads them)."""
        words, owned = (
            (self.unit_words, self.unit_texts) if texts == "unit" else (self.episode_words, self.episode_texts)
        )
        found: set[str] = set()
        for name, _ in anchors:
            postings = [words.get(w, set()) for w in name_words(name)]
            if postings:
                found |= set.intersection(*sorted(postings, key=len))
        return {owner: owned[owner] for owner in found}


def _index_words(index: dict[str, set[str]], owner: str, text: str) -> None:
    for word in text_words(text):
        index.setdefault(word, set()).add(owner)


@dataclass
class ScopeIndex:
    """``ScopeView``s of every scope, caught up with the tables when read: units, decisions and
    episodes are only ever added to their tables (dicts keep that order) until something is
    removed; ``reset`` then has them built again at the next read."""

    views: dict[Scope, ScopeView] = field(default_factory=dict)
    _read: tuple[int, int, int] | None = None

    def reset(self) -> None:
        self.views, self._read = {}, None

    def see(self, scope: Scope, names: Iterable[tuple[str, str]]) -> None:
        """Mentions written to texts of the scope (name, kind); a view built again reads them all."""
        if self._read is not None:
            self._of(scope).see(n for n, kind in names if kind in SEEN_KINDS)

    def view(
        self,
        scope: Scope,
        units: Mapping[str, MemoryUnit],
        decisions: Mapping[str, Decision],
        episodes: Mapping[tuple[str, str], Episode],
        mentions: Callable[[], Iterable[tuple[Scope, Iterable[tuple[str, str]]]]],
    ) -> ScopeView:
        """The scope's view, after catching up with what the tables gained since the last read
        (``mentions``: every stored text's scope and mentions, read when the views are built)."""
        if self._read is None:
            self._read = (0, 0, 0)
            for owner_scope, names in mentions():
                self._of(owner_scope).see(n for n, kind in names if kind in SEEN_KINDS)
        done_units, done_decisions, done_episodes = self._read
        for u in islice(units.values(), done_units, None):
            self._of(u.scope).add_unit(u)
        for d in islice(decisions.values(), done_decisions, None):
            self._of(d.scope).add_decision(d)
        for e in islice(episodes.values(), done_episodes, None):
            self._of(e.scope).add_episode(e)
        self._read = (len(units), len(decisions), len(episodes))
        return self._of(scope)

    def _of(self, scope: Scope) -> ScopeView:
        view = self.views.get(scope)
        if view is None:
            view = self.views[scope] = ScopeView()
        return view
