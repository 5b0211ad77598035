"""Units and decisions written before timelines (graphmem.domain.timeline) join their timeline groups,
so the write path extends the timelines they started instead of starting new ones beside them:
a later value of a single-valued slot ends the earlier release's value, a restatement is
known as one, a retraction reaches the earlier assertion.

Each unit gets its group (``group_of`` of the fact it shows, as a write computes it now), the
assertion it shows (``assertion_id``: the decision that produced it) and its episode's time
(``occurred_at``, also on its search entries, which took the world start in its place); that
decision gets the assertion's event: its value from the unit's start until the unit's own end,
ordered by when it was decided and the fact's place in its episode. A DELETE decision that
ended a unit becomes a retraction of that unit's value. Nothing else changes: no unit, edge or
search entry is added or ended, so every answer stays as the earlier release gave it. Where
that release drew two values of a single-valued slot over one world time (a late fact kept
until the next value rather than its successor's start), the next write to the slot draws
the timeline again and ends the overlap from then on (earlier system times still show it).

A unit no decision produced stays outside any group (searchable as before; later writes leave
it alone), and is counted in a note. Units are done page by page, each page with its decisions
in one transaction, and only those still without a group are read: an interrupted run carries
on where it stopped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import run
from graphmem.adapters.neo4j.store import event_props, to_datetime, wire
from graphmem.domain.entries import micros
from graphmem.domain.models import Candidate, MemoryKind, Scope, SubjectType, TimelineEvent, Triple
from graphmem.pipelines.write import group_of
from graphmem.policy import PolicyConfig

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

PAGE = 500


def apply(conn: Neo4jConnection) -> list[str]:
    single_valued = PolicyConfig().single_valued
    orphans, after = 0, ""
    while rows := conn.read("timelines/units_without_group", after=after, limit=PAGE):
        after = rows[-1]["unit"]["id"]
        joined = [_joined(r, single_valued) for r in rows if r["decision"] is not None]
        orphans += len(rows) - len(joined)
        if joined:
            conn.write_tx(lambda tx, joined=joined: _join(tx, joined), what="joining units to their timelines")
    after = ""
    while rows := conn.read("timelines/retractions_without_event", after=after, limit=PAGE):
        after = rows[-1]["decision"]["id"]
        conn.write("timelines/set_events", rows=[{"id": r["decision"]["id"], "event": _retraction(r)} for r in rows])
    if not orphans:
        return []
    return [
        f"{orphans} unit(s) of an earlier release have no decision that produced them: they stay searchable "
        "outside any timeline (a later fact of their slot does not end them)"
    ]


def _join(tx: ManagedTransaction, joined: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Units and the decisions that produced them, together: a unit with a group is done."""
    run(tx, "timelines/set_unit_groups", rows=[unit for unit, _ in joined])
    run(tx, "timelines/set_events", rows=[event for _, event in joined])


def _joined(row: dict[str, Any], single_valued: frozenset[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The properties that put one unit and its producing decision in their timeline group."""
    u, decision, episode = row["unit"], row["decision"], row["episode"] or {}
    # As stored: a subject 0011 had to leave in another spelling is no valid Scope any more.
    scope = Scope.model_construct(
        subject_type=SubjectType(u["subject_type"]), subject_id=u["subject_id"], project_id=u.get("project_id")
    )
    triple = None
    if u.get("subject") and u.get("predicate"):
        triple = Triple(
            subject=u["subject"],
            predicate=u["predicate"],
            object=u.get("object"),
            single_valued=bool(u.get("single_valued")),
        )
    candidate = Candidate(
        kind=MemoryKind(u["kind"]),
        scope=scope,
        content=u["content"],
        valid_at=to_datetime(u.get("valid_at")),
        invalid_at=to_datetime(u.get("invalid_at")),
        labels=tuple(u.get("labels") or ()),
        confidence=u["confidence"],
        triple=triple,
    )
    single = triple is not None and (triple.single_valued or triple.predicate in single_valued)
    group, value = group_of(candidate, single)
    occurred = to_datetime(episode.get("occurred_at"))
    event = TimelineEvent(
        kind="assert",
        group=group,
        single=single,
        value=value,
        order_at=to_datetime(decision["decided_at"]),
        order_fact=_place(candidate, episode.get("facts")),
        valid_at=candidate.valid_at,
        end=candidate.invalid_at,
        candidate=candidate,
        extractor_version=u.get("extractor_version"),
        channel=u.get("channel"),
        occurred_at=occurred,
    )
    unit = {
        "id": u["id"],
        "group": group,
        "assertion_id": decision["id"],
        "occurred_at": wire(occurred),
        "occurred": micros(occurred, 0) if occurred else None,
    }
    return unit, {"id": decision["id"], "event": event_props(event)}


def _retraction(row: dict[str, Any]) -> dict[str, Any]:
    event = TimelineEvent(
        kind="retract",
        group=row["group"],
        single=bool(row["single"]),
        value=row["value"],
        order_at=to_datetime(row["decision"]["decided_at"]),
    )
    return event_props(event)


def _place(candidate: Candidate, facts_json: str | None) -> int:
    """The place of the fact a unit shows among its episode's facts (0 when not found): ties
    of world time within one episode go to the later fact, as when it was written."""
    for i, fact in enumerate(json.loads(facts_json or "[]")):
        text = fact.get("content") or " ".join(
            w for w in (fact.get("subject"), (fact.get("predicate") or "").replace("_", " "), fact.get("object")) if w
        )
        if text == candidate.content:
            return i
    return 0
