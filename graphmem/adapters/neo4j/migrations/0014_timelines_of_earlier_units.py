"""Units and decisions written before timelines (``graphmem.domain.timeline``) join their
timeline groups, so new writes extend them: a later value of a single-valued slot ends
the earlier release's, a restatement is known as one, a retraction reaches the assertion.

- Each unit gets its group (``group_of`` of the fact it shows), its assertion (the decision
  that produced it) and its episode's time; that decision gets the assertion's event. A DELETE
  decision that ended a unit becomes a retraction of its value.
- No unit, edge or search entry is added or ended: every answer stays as it was. An overlap
  the earlier release drew in a single-valued slot ends at the slot's next write.
- A unit no decision produced stays outside any group, counted in a note.
- Page by page, one transaction each; only units without a group are read, so an
  interrupted run carries on.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import run
from graphmem.adapters.neo4j.migrations.frozen import (
    SINGLE_VALUED,
    event_props,
    group_of,
    stored_datetime,
    to_datetime,
    wire,
)
from graphmem.domain.models import Candidate, MemoryKind, Scope, SubjectType, TimelineEvent, Triple

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

PAGE = 500


def apply(conn: Neo4jConnection) -> list[str]:
    orphans, after = 0, ""
    while rows := conn.read("timelines/units_without_group", after=after, limit=PAGE):
        after = rows[-1]["unit"]["id"]
        joined = [_joined(r) for r in rows if r["decision"] is not None]
        orphans += len(rows) - len(joined)
        if joined:
            conn.write_tx(functools.partial(_join, joined=joined), what="joining units to their timelines")
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


def _joined(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
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
    single = triple is not None and (triple.single_valued or triple.predicate in SINGLE_VALUED)
    group, value = group_of(candidate, single)
    occurred = to_datetime(episode.get("occurred_at"))
    event = TimelineEvent(
        kind="assert",
        group=group,
        single=single,
        value=value,
        order_at=stored_datetime(decision["decided_at"]),
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
    }
    return unit, {"id": decision["id"], "event": event_props(event)}


def _retraction(row: dict[str, Any]) -> dict[str, Any]:
    event = TimelineEvent(
        kind="retract",
        group=row["group"],
        single=bool(row["single"]),
        value=row["value"],
        order_at=stored_datetime(row["decision"]["decided_at"]),
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
