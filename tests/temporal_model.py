"""A reference model of graphmem's temporal semantics: what any (world time T, system time S)
must show, stated directly and evaluated by brute force. It knows nothing of units, edges or
timelines; the stateful test compares the implementation with it.

The rules:
- An assertion counts from the step it was written (S) until re-extraction retires it.
- A single-valued slot (subject, predicate) at T holds the value of the standing assertion with
  the latest valid_at <= T; equal valid_at: the later one in order (the asserting episode's
  first step, then its place in the write, then the fact's place in the episode). It holds
  until that assertion's own end; a later start ends it earlier.
- A multi-valued slot holds every standing assertion whose [valid_at, end) covers T.
- An ending of a (subject, predicate, object) at E (its end, else its episode's time) ends
  every standing assertion of that fact that starts before E at E at the latest, in whatever
  order they came.
- A retraction removes the assertions and endings of its (subject, predicate, object) that
  come before it in order; later ones of the same fact stand.
- Re-extraction retires an episode's facts and writes them again at that step, keeping the
  episode's place in the order: where the extractors agree, the same value stands.
- Deleting an episode removes all its assertions and retractions as if never written, at
  every S: the only operation that rewrites the past.
- A fact without valid_at is true from its episode's time (or from its end, if earlier).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class FactSpec:
    subject: str
    predicate: str
    object: str
    single: bool
    valid: datetime | None
    end: datetime | None = None
    #: "assert", "end" (true until ``end``, else the episode's time) or "retract".
    op: str = "assert"

    @property
    def content(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"


@dataclass
class _Assertion:
    episode: str
    fact: FactSpec
    valid: datetime
    order: tuple[int, int, int]
    known: int
    retired: int | None = None


@dataclass
class TemporalModel:
    step: int = 0
    facts: list[_Assertion] = field(default_factory=list)
    #: episode id -> (its first step, its place in that write, its occurred time, its facts)
    episodes: dict[str, tuple[int, int, datetime, tuple[FactSpec, ...]]] = field(default_factory=dict)
    version: dict[str, str] = field(default_factory=dict)

    def ingest(self, episodes: list[tuple[str, datetime, tuple[FactSpec, ...]]], version: str) -> None:
        """One write of several episodes (ids already written are skipped)."""
        self.step += 1
        for place, (eid, occurred, facts) in enumerate(episodes):
            if eid in self.episodes:
                continue
            self.episodes[eid] = (self.step, place, occurred, facts)
            self.version[eid] = version
            self._assert(eid, self.step)

    def _assert(self, eid: str, known: int) -> None:
        first, place, occurred, facts = self.episodes[eid]
        for i, f in enumerate(facts):
            if f.op == "end":
                valid = f.end or occurred  # for an ending: when the fact stopped
            else:
                valid = f.valid if f.valid is not None else min(occurred, f.end or occurred)
            self.facts.append(_Assertion(eid, f, valid, (first, place, i), known))

    def reextract(self, version: str) -> None:
        """Every episode whose latest extraction is another version is extracted again."""
        self.step += 1
        for eid in self.episodes:
            if self.version[eid] == version:
                continue
            for a in self.facts:
                if a.episode == eid and a.retired is None:
                    a.retired = self.step
            self.version[eid] = version
            self._assert(eid, self.step)

    def delete(self, eid: str) -> None:
        self.step += 1
        self.facts = [a for a in self.facts if a.episode != eid]
        del self.episodes[eid]
        del self.version[eid]

    def values(self, t: datetime, step: int) -> set[tuple[str, str, str]]:
        """(subject, predicate, object) of every fact true at world time ``t`` as known after
        ``step``."""
        known = [a for a in self.facts if a.known <= step and (a.retired is None or a.retired > step)]

        def key(a: _Assertion) -> tuple[str, str, str]:
            return a.fact.subject, a.fact.predicate, a.fact.object

        reach: dict[tuple[str, str, str], tuple[int, int, int]] = {}
        for r in known:
            if r.fact.op == "retract" and (key(r) not in reach or r.order > reach[key(r)]):
                reach[key(r)] = r.order
        standing = [a for a in known if not (key(a) in reach and a.order < reach[key(a)])]
        ends = [e for e in standing if e.fact.op == "end"]

        def holds(a: _Assertion) -> bool:  # t is before the assertion's end and every ending after its start
            cuts = [e.valid for e in ends if key(e) == key(a) and a.valid < e.valid]
            return all(t < e for e in cuts + ([a.fact.end] if a.fact.end else []))

        out: set[tuple[str, str, str]] = set()
        slots: dict[tuple[str, str], list[_Assertion]] = {}
        for a in standing:
            if a.fact.op != "assert":
                continue
            if a.fact.single:
                slots.setdefault((a.fact.subject, a.fact.predicate), []).append(a)
            elif a.valid <= t and holds(a):
                out.add(key(a))
        for candidates in slots.values():
            started = [a for a in candidates if a.valid <= t]
            if not started:
                continue
            latest = max(started, key=lambda a: (a.valid, a.order))
            if holds(latest):
                out.add(key(latest))
        return out
