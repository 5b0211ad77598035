"""``GraphMem``'s reads: recall and assembly at a point on both time axes, provenance, history,
traces, the stored episodes, units and blocks, and the decision log."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any, Literal

from graphmem.api.arguments import (
    MAX_BUDGET,
    MAX_OFFSET,
    Kinds,
    Query,
    SubjectLike,
    Time,
    as_scope,
    point_in_time,
)
from graphmem.api.parts import Parts
from graphmem.domain import timeline
from graphmem.domain.limits import Hops, K
from graphmem.domain.models import (
    Decision,
    Episode,
    GroupUnit,
    MemoryBlock,
    MemoryUnit,
    Op,
    Page,
    UnitFilter,
    Usage,
    normalise,
    utcnow,
)
from graphmem.errors import InvalidInput, NotFound
from graphmem.pipelines.assemble import Assembly
from graphmem.pipelines.recall import Recalled
from graphmem.pipelines.write import drawn


def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphmem-aside")


#: Reads a recall asks beside its own statement (the undecided episodes' count), so that their
#: round trips overlap it: one pool for the process, its threads started on first use.
ASIDE = _pool()


def _fresh_pool() -> None:
    """A forked child has none of its parent's threads: it starts its own pool."""
    global ASIDE
    ASIDE = _pool()


os.register_at_fork(after_in_child=_fresh_pool)


class Reading(Parts):
    """Recall, assembly, provenance and history; episodes, units, blocks and decisions."""

    def recall(
        self,
        query: Query,
        subject: SubjectLike,
        k: K = 10,
        as_of: Time = None,
        known_at: Time = None,
        hops: Hops = 0,
        kinds: Kinds = (),
        include_shared: bool = False,
        project: str | None = None,
        mode: Literal["hybrid", "semantic", "lexical"] = "hybrid",
        rerank: bool | None = None,
    ) -> Recalled:
        """The k best units visible at (as_of, known_at), best first; ``hops`` walks entities.
        A time the question names ("in March 2021", "yesterday") is in ``.window`` of the result;
        with no ``as_of`` it decides what is visible: facts true at some point inside it.
        ``rerank``: reorder the best candidates with the cross-encoder (None: ``Settings.rerank``)."""
        at = point_in_time(as_of, known_at)
        scopes = self.scopes(subject, project, include_shared)
        try:
            undecided: Future[int] | None = ASIDE.submit(self.store.undecided_count, scopes)  # what the hits may miss
        except RuntimeError:  # the interpreter is shutting down: no new thread, asked after the recall
            undecided = None
        hits = self.recaller.recall(query, scopes, k, at, hops, kinds, mode, fixed=as_of is not None, rerank=rerank)
        hits.incomplete = undecided.result() if undecided else self.store.undecided_count(scopes)
        now = utcnow()
        for scope in {h.unit.scope for h in hits}:
            self.usage.add(scope, [h.unit.id for h in hits if h.unit.scope == scope], now)
        return hits

    def assemble(
        self,
        query: Query,
        subject: SubjectLike,
        budget: int | None = None,
        as_of: Time = None,
        known_at: Time = None,
        include_shared: bool = False,
        project: str | None = None,
        hops: Hops = 0,
    ) -> Assembly:
        """Resident blocks plus recalled units within the recall budget; the trace is stored."""
        if budget is not None and not 0 <= budget <= MAX_BUDGET:
            raise InvalidInput(f"budget must be between 0 and {MAX_BUDGET}")
        at = point_in_time(as_of, known_at)
        return self.assembler.assemble(
            query, self.scopes(subject, project, include_shared), at, budget, hops=hops, fixed=as_of is not None
        )

    def explain(self, unit_id: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any]:
        """Provenance of a unit: its episode, extractor version, decisions, invalidations, the
        entities it is about or names (what walks go through), and those its episode names."""
        scope = as_scope(subject, project)
        unit = self.store.get_unit(unit_id, scope)
        if unit is None:
            raise NotFound(f"no unit {unit_id} in scope {scope}")
        episode = self.store.get_episode(unit.source.episode_id, scope)
        return {
            "unit": unit,
            "episode": episode,
            "decisions": self.store.list_decisions(scope, unit_id=unit_id),
            "entities": self.store.unit_entities(scope, unit_id),
            "episode_entities": self.store.episode_entities(scope, episode.id) if episode else [],
            **self.store.invalidations(unit_id, scope).model_dump(),
        }

    def trace(self, trace_id: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any] | None:
        """A stored assembly trace with the blocks it loaded and the units it recalled (as
        they are now), or None when there is no such trace in the scope."""
        scope = as_scope(subject, project)
        trace = self.store.get_trace(trace_id, scope)
        if trace is None:
            return None
        blocks = {b.id: b for b in self.store.list_blocks(scope)}
        units = self.store.list_units(
            scope, UnitFilter(ids=trace.recalled_ids, include_expired=True), Page(limit=max(len(trace.recalled_ids), 1))
        )
        by_id = {u.id: u for u in units}
        return {
            "trace": trace,
            "resident": [blocks[i] for i in trace.resident_ids if i in blocks],
            "recalled": [by_id[i] for i in trace.recalled_ids if i in by_id],
        }

    def history(
        self,
        subject: SubjectLike,
        entity: str | None = None,
        unit_id: str | None = None,
        project: str | None = None,
        known_at: Time = None,
        include_expired: bool = False,
    ) -> list[dict[str, Any]]:
        """The bi-temporal timeline of an entity's facts, or of one unit and the units its
        decision superseded, as the system saw it at ``known_at`` (default now).

        - With ``entity``: one timeline per slot (subject and predicate) in world time, of the
          units alive at ``known_at``; with ``include_expired`` also those known then but no
          longer believed.
        - Each entry: the unit as seen then (both axes), its ``slot``, the decisions that shaped
          it (oldest first), and its ``belief``.
        """
        scope = as_scope(subject, project)
        at = point_in_time(None, known_at)
        if unit_id:
            # What it superseded: the units its decision ended, and the one it updated (an
            # UPDATE that redrew a stretch ends no unit of its own: it names its target).
            made = self.store.list_decisions(scope, unit_ids=[unit_id], limit=10_000)
            ids = list(
                dict.fromkeys(
                    [
                        unit_id,
                        *(o.unit_id for o in self.store.invalidations(unit_id, scope).outgoing),
                        *(d.target_id for d in made if d.produced_id == unit_id and d.target_id),
                    ]
                )
            )
            records = [r for r in self.store.unit_records(scope, ids) if r.unit.time.created_at <= at.known]
            if not any(r.unit.id == unit_id for r in records):
                raise NotFound(f"no unit {unit_id} in scope {scope}")
        elif entity:
            found = self.store.units_naming(scope, entity)
            alive = {s.id for s in timeline.shown(drawn(found), at.known)}
            records = [
                r for r in found if r.unit.id in alive or (include_expired and r.unit.time.created_at <= at.known)
            ]
        else:
            raise InvalidInput("history needs a unit id or an entity name")
        decisions = self.store.list_decisions(scope, unit_ids=[r.unit.id for r in records], limit=10_000)
        entries = []
        for r in records:
            unit = seen_at(r, at.known)
            hung = {e.decision_id for e in r.edges if e.expired_at <= at.known}
            mine = sorted(
                (
                    d
                    for d in decisions
                    if d.decided_at <= at.known and (unit.id in (d.target_id, d.produced_id) or d.id in hung)
                ),
                key=lambda d: (d.decided_at, d.id),
            )
            entries.append({"unit": unit, "slot": slot_label(unit), "decisions": mine, **belief(r, at.known)})
        entries.sort(
            key=lambda e: (
                normalise(e["slot"]),
                e["unit"].time.valid_at or e["unit"].time.created_at,
                e["unit"].time.created_at,
                e["unit"].id,
            )
        )
        return entries

    def list_blocks(self, subject: SubjectLike, project: str | None = None) -> list[MemoryBlock]:
        """Every resident block of a subject."""
        return self.store.list_blocks(as_scope(subject, project))

    def get_block(self, subject: SubjectLike, label: str, project: str | None = None) -> MemoryBlock:
        """One block by label. Raises ``NotFound``."""
        scope = as_scope(subject, project)
        block = self.store.get_block(scope, label)
        if block is None:
            raise NotFound(f"no block {label!r} for {scope}")
        return block

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as budgets count them."""
        return self.counter.count(text)

    # -- the audit -------------------------------------------------------------------------
    def decisions(
        self,
        subject: SubjectLike,
        project: str | None = None,
        episode_id: str | None = None,
        op: str | Op | None = None,
        limit: int = 100,
    ) -> list[Decision]:
        """The decision log of a subject, newest first (one episode's, or one op's)."""
        if not 1 <= limit <= 10_000:
            raise InvalidInput("limit must be between 1 and 10000")
        try:
            chosen = Op(op.upper() if isinstance(op, str) else op) if op is not None else None
        except ValueError:
            raise InvalidInput(f"unknown op {op!r}: use {'|'.join(o.value for o in Op)}") from None
        return self.store.list_decisions(
            as_scope(subject, project), episode_id=episode_id, op=chosen.value if chosen else None, limit=limit
        )

    def fact_texts(
        self, decisions: Iterable[Decision], subject: SubjectLike, project: str | None = None
    ) -> dict[str, str]:
        """The text of every unit the decisions produced or targeted (ended, retracted,
        superseded), by unit id, so each row of a decision log can name its facts."""
        ids = sorted({i for d in decisions for i in (d.target_id, d.produced_id) if i})
        return {r.unit.id: r.unit.content for r in self.store.unit_records(as_scope(subject, project), ids)}

    def episodes(
        self, subject: SubjectLike, project: str | None = None, offset: int = 0, limit: int = 100
    ) -> list[Episode]:
        """A page of the subject's episodes, in the store's order."""
        scope = as_scope(subject, project)
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET}")
        try:
            page = Page(offset=offset, limit=limit)
        except ValueError as exc:
            raise InvalidInput(f"episodes page: {exc}") from None
        found = (self.store.get_episode(i, scope) for i in self.store.list_episode_ids(scope, page))
        return [e for e in found if e is not None]

    def unit(self, unit_id: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any]:
        """One unit as seen now (whether or not still believed) with its usage:
        ``{"unit": MemoryUnit, "usage": Usage}``. Raises ``NotFound``."""
        scope = as_scope(subject, project)
        self.usage.flush()  # the recall counts shown include those not written yet
        unit = self.store.get_unit(unit_id, scope)
        if unit is None:
            raise NotFound(f"no unit {unit_id} in scope {scope}")
        found, _ = self.store.lookup(scope, "usage", [unit_id])
        return {"unit": unit, "usage": found[0] if found else Usage(unit_id=unit_id, scope=scope)}

    def episode(self, episode_id: str, subject: SubjectLike, project: str | None = None) -> Episode:
        """One episode. Raises ``NotFound``."""
        scope = as_scope(subject, project)
        found = self.store.get_episode(episode_id, scope)
        if found is None:
            raise NotFound(f"no episode {episode_id} in scope {scope}")
        return found

    def reviews(
        self, subject: SubjectLike | None = None, project: str | None = None, status: str | None = "pending"
    ) -> list[Any]:
        """Candidates held for human review (all subjects when none is given)."""
        return self.store.list_reviews(as_scope(subject, project) if subject else None, status)

    def subjects(self) -> list[dict[str, Any]]:
        """Every subject (with its project) holding episodes, units or decisions:
        ``{"scope": Scope, "episodes": n, "units": n, "decisions": n}`` in scope order."""
        return [dict(row) for row in self.store.subjects()]


def slot_label(unit: MemoryUnit) -> str:
    """The slot a unit's fact fills, as written: subject and predicate ("" without a triple)."""
    return f"{unit.triple.subject} {unit.triple.predicate}" if unit.triple else ""


def belief(record: GroupUnit, known: datetime) -> dict[str, Any]:
    """How a stored unit was believed up to ``known``, so history says what recall says: an
    edge that only ends its world interval earlier leaves it believed (with the interval it
    was believed to have before, in ``earlier``); only an edge without a world end (withdrawn,
    or closed for a continuation) stops belief (``believed_until``). ``edges``: the raw edges."""
    edges = sorted((e for e in record.edges if e.expired_at <= known), key=lambda e: e.expired_at)
    closing = [e.expired_at for e in edges if e.invalid_at is None]
    earlier, end = [], record.unit.time.invalid_at
    for e in edges:
        if e.invalid_at is not None and (end is None or e.invalid_at < end):
            earlier.append({"until": e.expired_at, "invalid_at": end})
            end = e.invalid_at
    return {"believed_until": min(closing, default=None), "earlier": earlier, "edges": edges}


def seen_at(record: GroupUnit, known: datetime) -> MemoryUnit:
    """A stored unit as the system saw it at ``known``: ``expired_at`` the first edge known
    then, ``invalid_at`` the earliest of its own end and the ends those edges give."""
    edges = [e for e in record.edges if e.expired_at <= known]
    ends = [t for t in (record.unit.time.invalid_at, *(e.invalid_at for e in edges)) if t is not None]
    time = record.unit.time.model_copy(
        update={"expired_at": min((e.expired_at for e in edges), default=None), "invalid_at": min(ends, default=None)}
    )
    return record.unit.model_copy(update={"time": time})
