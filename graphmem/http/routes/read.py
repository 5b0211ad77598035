"""The routes that read memory at a point on both time axes (recall, assembly, history,
provenance, traces, the decision log), and an operator's retraction or ending of a fact."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from graphmem.domain.models import Decision, Op
from graphmem.domain.times import parse_optional_time
from graphmem.faces import views
from graphmem.http import schemas
from graphmem.http.bodies import AssembleIn, EndIn, RecallIn, RetractIn
from graphmem.http.context import (
    BODY,
    MODEL,
    SUBJECT,
    TIME_SCHEMA,
    WRITE,
    CallerDep,
    Cursor,
    PageLimit,
    Target,
    offset_of,
    segment,
    v1_router,
)
from graphmem.http.errors import ApiError, answers
from graphmem.http.metrics import timed_recall, written

#: Decisions a cursor can page through (``GraphMem.decisions`` reads the newest first).
DECISION_WINDOW = 10_000

router = v1_router()


# Unset fields stay out: the window is there only when the question named a time.
@router.post(
    "/subjects/{subject}/recall",
    tags=["read"],
    summary="The k best units visible at (as_of, known_at)",
    response_model=schemas.Recalled,
    response_model_exclude_unset=True,
    responses=answers(*SUBJECT, *BODY, MODEL),
)
async def recall(body: RecallIn, scope: Target, caller: CallerDep) -> dict:
    caller.check_shared(body.include_shared)

    def work() -> dict:
        hits = timed_recall(
            body.hops,
            lambda: caller.mem.recall(
                body.query,
                scope,
                k=body.k,
                as_of=body.as_of,
                known_at=body.known_at,
                hops=body.hops,
                kinds=tuple(body.kinds),
                include_shared=body.include_shared,
                mode=body.mode,
                rerank=body.rerank,
            ),
        )
        return views.recall(hits)

    return await caller.run(work)


@router.post(
    "/subjects/{subject}/assemble",
    tags=["read"],
    summary="Resident blocks plus recalled units: the context",
    response_model=schemas.Assembly,
    responses=answers(*SUBJECT, *BODY, MODEL),
)
async def assemble(body: AssembleIn, scope: Target, caller: CallerDep) -> dict:
    caller.check_shared(body.include_shared)

    def work() -> dict:
        return views.assembly(
            caller.mem.assemble(
                body.query,
                scope,
                budget=body.budget,
                as_of=body.as_of,
                known_at=body.known_at,
                include_shared=body.include_shared,
                hops=body.hops,
            )
        )

    return await caller.run(work)


@router.get(
    "/subjects/{subject}/history",
    tags=["read"],
    summary="The bi-temporal timeline of an entity or a unit",
    response_model=schemas.History,
    responses=answers(*SUBJECT, 404),
)
async def history(
    scope: Target,
    caller: CallerDep,
    entity: Annotated[str | None, Query(min_length=1)] = None,
    unit_id: Annotated[str | None, Query(min_length=1)] = None,
    known_at: Annotated[str | None, Query(json_schema_extra=TIME_SCHEMA)] = None,
    include_expired: Annotated[
        bool, Query(description="With entity: also the values no longer believed at known_at.")
    ] = False,
) -> dict:
    if (entity is None) == (unit_id is None):
        raise ApiError(422, "invalid_input", "give exactly one of entity or unit_id")
    known = parse_optional_time(known_at, "known_at")

    def work() -> dict:
        entries = caller.mem.history(
            scope, entity=entity, unit_id=unit_id, known_at=known, include_expired=include_expired
        )
        return {"entries": [views.history_entry(e) for e in entries]}

    return await caller.run(work)


@router.get(
    "/subjects/{subject}/units/{unit_id}",
    tags=["read"],
    summary="A unit's provenance: episode, extractor, decisions, invalidations",
    response_model=schemas.Explanation,
    responses=answers(*SUBJECT, 404),
)
async def explain(unit_id: str, scope: Target, caller: CallerDep) -> dict:
    return await caller.run(lambda: views.explanation(caller.mem.explain(segment(unit_id), scope)))


@router.post(
    "/subjects/{subject}/units/{unit_id}/retract",
    tags=["read"],
    summary="Retract a fact with a reason: a DELETE decision, through its timeline",
    response_model=schemas.Operated,
    responses=answers(*SUBJECT, *BODY, 404, WRITE, MODEL),
)
async def retract(unit_id: str, body: RetractIn, scope: Target, caller: CallerDep) -> dict:
    def work() -> dict:
        report = caller.mem.retract(segment(unit_id), scope, body.reason, actor=caller.actor)
        return {"unit_id": segment(unit_id), **written(views.write_report(report))}

    return await caller.run(work)


@router.post(
    "/subjects/{subject}/units/{unit_id}/end",
    tags=["read"],
    summary="End a fact with a reason: true until `at` (default now) and no longer; an UPDATE decision",
    response_model=schemas.Operated,
    responses=answers(*SUBJECT, *BODY, 404, WRITE, MODEL),
)
async def end(unit_id: str, body: EndIn, scope: Target, caller: CallerDep) -> dict:
    at = parse_optional_time(body.at, "at")

    def work() -> dict:
        report = caller.mem.end(segment(unit_id), scope, body.reason, at, actor=caller.actor)
        return {"unit_id": segment(unit_id), **written(views.write_report(report))}

    return await caller.run(work)


@router.get(
    "/subjects/{subject}/traces/{trace_id}",
    tags=["read"],
    summary="A stored assembly trace",
    response_model=schemas.TraceView,
    responses=answers(*SUBJECT, 404),
)
async def trace(trace_id: str, scope: Target, caller: CallerDep) -> dict:
    def work() -> dict:
        found = caller.mem.trace(segment(trace_id), scope)
        if found is None:
            raise ApiError(404, "not_found", f"no trace {segment(trace_id)} in scope {scope}")
        return views.stored_trace(found)

    return await caller.run(work)


@router.get(
    "/subjects/{subject}/decisions",
    tags=["audit"],
    summary="The decision log, newest first",
    response_model=schemas.DecisionPage,
    responses=answers(*SUBJECT),
)
async def decisions(
    scope: Target,
    caller: CallerDep,
    op: Op | None = None,
    episode: str | None = None,
    cursor: Cursor = None,
    limit: PageLimit = 100,
) -> dict:
    offset = offset_of(cursor)
    window = min(offset + limit + 1, DECISION_WINDOW)

    def work() -> tuple[list[Decision], dict[str, str]]:
        found = caller.mem.decisions(scope, episode_id=episode, op=op, limit=window)
        return found, caller.mem.fact_texts(found[offset : offset + limit], scope)

    found, texts = await caller.run(work)
    more = len(found) > offset + limit
    return {
        "decisions": views.decision_log(found[offset : offset + limit], texts),
        "next_cursor": str(offset + limit) if more else None,
    }
