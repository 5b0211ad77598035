"""The write's last stage: each touched timeline group drawn as the records its commit writes.

Whatever the policy decided about a candidate, where its unit starts and ends and which units
it ends is the timeline's job (``graphmem.domain.timeline``), so facts arriving in any order give
one value per single-valued slot at every (world time, system time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from graphmem.domain import timeline
from graphmem.domain.models import Decision, Invalidation, MemoryUnit, Op, Scope
from graphmem.pipelines.write.timelines import Group, as_event, day, drawn, retracts, unit_showing


class Records(NamedTuple):
    """What a batch's commit writes of its timelines."""

    units: list[MemoryUnit]
    invalidations: list[Invalidation]
    decisions: list[Decision]


def draw(scope: Scope, groups: Mapping[str, Group], now: datetime, decisions: list[Decision]) -> Records:
    """The units and edges each touched group's timeline needs now, each edge hung from the
    decision that caused it; continuations get decisions of their own."""
    by_id = {d.id: d for d in decisions}
    drawing = Records([], [], [])
    for group in groups.values():
        fresh = [d for d in group.events if d.decided_at == now]
        if fresh:
            _draw_group(scope, group, now, fresh, by_id, drawing)
    _name_targets(by_id)
    return drawing._replace(decisions=[*_unshown(by_id), *drawing.decisions])


def _draw_group(
    scope: Scope, group: Group, now: datetime, fresh: list[Decision], by_id: dict[str, Decision], into: Records
) -> None:
    """One group's new units and edges (into ``into``), its decisions' reasons in ``by_id``."""
    log = [as_event(d) for d in group.events]
    current = timeline.shown(drawn(group.units), now)
    desired = timeline.stretches(timeline.active(log, now), group.single)
    new_units, new_edges = timeline.step(current, desired, now, [as_event(d) for d in fresh])
    owners = {d.id: d for d in group.events}
    closed = {e.unit_id: e for e in new_edges if e.why == "continued"}
    continuing: dict[str, Decision] = {}
    for nu in new_units:
        owner = owners[nu.owner]
        unit = unit_showing(owner, nu, scope)
        into.units.append(unit)
        old = next((s.id for s in current if s.owner == nu.owner and s.id in closed), None)
        if owner.id in by_id and by_id[owner.id].produced_id is None and old is None:
            by_id[owner.id] = by_id[owner.id].model_copy(update={"produced_id": unit.id})
            continue
        cause = by_id[closed[old].cause] if old else by_id[fresh[0].id]
        reason = f"{unit.content!r} now holds from {day(nu.start)} until {day(nu.end)} ({cause.reason})"
        d = Decision(
            op=Op.UPDATE if old else Op.ADD,
            target_id=old,
            produced_id=unit.id,
            reason=reason,
            scope=scope,
            policy="timeline",
            decided_at=now,
            episode_id=cause.episode_id,
            candidate=unit.content,
        )
        into.decisions.append(d)
        if old:
            continuing[old] = d
    for e in new_edges:
        cause = continuing[e.unit_id] if e.why == "continued" else by_id[e.cause]
        into.invalidations.append(
            Invalidation(
                unit_id=e.unit_id,
                decision_id=cause.id,
                expired_at=now,
                invalid_at=e.invalid_at,
                reason=_edge_reason(e, cause),
            )
        )
    _tell(by_id, group, current, new_units, new_edges, owners)


def _name_targets(by_id: dict[str, Decision]) -> None:
    """A policy may have named an assertion of this batch as its target: name its unit."""
    for did, d in by_id.items():
        if d.target_id in by_id:
            target = by_id[d.target_id].produced_id
            by_id[did] = d.model_copy(
                update={"target_id": target} if target or d.op is Op.NOOP else {"target_id": None, "op": Op.ADD}
            )


def _unshown(by_id: dict[str, Decision]) -> list[Decision]:
    """The decisions, each new assertion drawn by no unit of its own made a NOOP that says why:
    a retraction later in this write took it back, or it is absorbed into a stretch a current
    fact shows, or it is true for no time."""
    retracting: dict[tuple[str, str], list[Decision]] = {}  # this write's retractions, by group and value
    for r in by_id.values():
        if r.event is not None and r.event.kind == "retract":
            retracting.setdefault((r.event.group, r.event.value), []).append(r)
    final = []
    for d in by_id.values():
        if d.event is not None and d.event.kind == "assert" and d.produced_id is None and d.op in (Op.ADD, Op.UPDATE):
            later = [r for r in retracting.get((d.event.group, d.event.value), ()) if retracts(r.logged, [d])]
            empty = d.event.valid_at is not None and d.event.end == d.event.valid_at
            why = (
                f"retracted later in this write (episode {later[0].episode_id})"
                if later
                else "true for no time (it ends as it begins): nothing to show"
                if empty
                else "already shown by a current fact"
            )
            d = d.model_copy(update={"op": Op.NOOP, "reason": f"{d.reason}; {why}"})
        final.append(d)
    return final


def _tell(
    by_id: dict[str, Decision],
    group: Group,
    current: Sequence[timeline.Shown],
    new_units: Sequence[timeline.NewUnit],
    new_edges: Sequence[timeline.NewEdge],
    owners: Mapping[str, Decision],
) -> None:
    """Reasons that say what the timeline did, whatever order the facts came in: an assertion's
    decision names the facts it ended and the one that bounds it ("'Globex' holds from
    2021-09-01: 'Acme' ends then; until 2023-01-01, where 'Initech' begins"). A policy other
    than the rules keeps its own words beside it."""
    texts = {g.unit.id: g.unit.content for g in group.units}
    shown: list[timeline.Shown | timeline.NewUnit] = [*current, *new_units]
    starts = {
        d.event.valid_at: d.event.candidate.content
        for d in owners.values()
        if d.event and d.event.kind == "assert" and d.event.candidate and d.event.valid_at
    }
    for nu in new_units:
        d = by_id.get(nu.owner)
        if d is None or d.produced_id != nu.id or d.event is None or d.event.candidate is None:
            continue
        ended = [e for e in new_edges if e.cause == d.id and e.why == "ended" and e.unit_id in texts]
        if not ended and nu.end is None:
            continue
        story = f"{d.event.candidate.content!r} holds from {day(nu.start)}"
        story += "".join(
            f": {texts[e.unit_id]!r} ends {'then' if e.invalid_at == nu.start else day(e.invalid_at)}" for e in ended
        )
        # The target is what the timeline did: the fact it ended, else the one that bounds it.
        update: dict[str, Any] = (
            {"op": Op.UPDATE, "target_id": ended[0].unit_id, "invalid_at": ended[0].invalid_at} if ended else {}
        )
        if nu.end is not None:
            after = starts.get(nu.end)
            story += f"; until {day(nu.end)}" + (f", where {after!r} begins" if after else "")
            bound = next((u.id for u in shown if u.start == nu.end), None)
            if not ended and bound:
                update = {"op": Op.ADD, "target_id": bound, "invalid_at": nu.end}
        update["reason"] = story if d.policy == "rule" else f"{story} ({d.reason})"
        by_id[d.id] = d.model_copy(update=update)


def _edge_reason(edge: timeline.NewEdge, cause: Decision) -> str:
    c = cause.event.candidate if cause.event else None
    if edge.why == "ended":
        if c is not None and cause.logged.kind == "assert" and cause.logged.valid_at == edge.invalid_at:
            return f"ends {day(edge.invalid_at)}, where {c.content!r} begins"
        return f"ends {day(edge.invalid_at)}: {cause.reason}"
    if edge.why == "continued":
        return f"closed: a longer stretch continues it ({cause.reason})"
    if cause.event is not None and cause.event.kind == "assert":
        return f"superseded by {c.content!r}" if c else cause.reason
    return cause.reason
