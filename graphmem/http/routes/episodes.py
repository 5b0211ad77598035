"""The routes of episodes: writes (a job when one outlives its request), pages, one episode,
deletion, and the completion of undecided ones."""

from __future__ import annotations

from typing import Any

from graphmem.domain.models import Episode
from graphmem.errors import error_line
from graphmem.faces import views
from graphmem.http import schemas
from graphmem.http.bodies import EpisodesIn, episode_item
from graphmem.http.context import (
    BODY,
    KEYED,
    LATE,
    MODEL,
    SUBJECT,
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
from graphmem.http.metrics import written

router = v1_router()


@router.post(
    "/subjects/{subject}/episodes",
    tags=["episodes"],
    summary="Write episodes (idempotent by episode id)",
    response_model=schemas.Ingested,
    responses={**answers(*SUBJECT, *BODY, WRITE, MODEL), 202: LATE},
)
async def add_episodes(body: EpisodesIn, scope: Target, caller: CallerDep) -> dict:
    cap = caller.config.max_episodes
    if len(body.episodes) > cap:  # refused whole, before it takes a worker: nothing of it is stored
        raise ApiError(
            413,
            "payload_too_large",
            f"{len(body.episodes)} episodes in one request, over the {cap} "
            "a request may carry: send them in several requests",
        )

    def work() -> dict:
        episodes: list[Episode] = []
        indexes: list[int] = []  # where each episode is in the request
        failed: list[dict[str, Any]] = []
        for index, item in enumerate(body.episodes):
            try:
                episodes.append(episode_item(item, scope))
                indexes.append(index)
            except ValueError as exc:
                failed.append({"index": index, "error": error_line(exc)})
        report = caller.mem.ingest(episodes, body.extractor, actor=caller.actor)
        failed += [{"index": indexes[position], "error": why} for position, why in report.rejected]
        failed.sort(key=lambda f: f["index"])
        return dict(written(views.ingest(report, len(episodes) - len(report.rejected), failed)))

    # Past its time the write becomes a job (202), never a 503 for work that then completes.
    return await caller.run(work, late=scope)


@router.get(
    "/jobs/{job_id}",
    tags=["episodes"],
    summary="A write that outlived its request: running, done or failed",
    response_model=schemas.Job,
    responses=answers(*KEYED, 404),
)
async def get_job(job_id: str, caller: CallerDep) -> dict:
    return await caller.jobs.get(caller.mem, segment(job_id), caller)


@router.post(
    "/subjects/{subject}/complete",
    tags=["episodes"],
    summary="Decide the episodes a write stored but never decided (recall's `incomplete`)",
    response_model=schemas.WriteReport,
    responses={**answers(*SUBJECT, WRITE, MODEL), 202: LATE},
)
async def complete(scope: Target, caller: CallerDep) -> dict:
    return await caller.run(
        lambda: dict(written(views.write_report(caller.mem.complete(scope, actor=caller.actor)))),
        late=scope,
    )


@router.get(
    "/subjects/{subject}/episodes",
    tags=["episodes"],
    summary="A page of the subject's episodes",
    response_model=schemas.EpisodePage,
    responses=answers(*SUBJECT),
)
async def list_episodes(scope: Target, caller: CallerDep, cursor: Cursor = None, limit: PageLimit = 100) -> dict:
    offset = offset_of(cursor)
    found = await caller.run(caller.mem.episodes, scope, None, offset, limit + 1)
    more = len(found) > limit
    return {"episodes": [views.episode(e) for e in found[:limit]], "next_cursor": str(offset + limit) if more else None}


@router.get(
    "/subjects/{subject}/episodes/{episode_id}",
    tags=["episodes"],
    summary="One episode with its facts",
    response_model=schemas.Episode,
    responses=answers(*SUBJECT, 404),
)
async def get_episode(episode_id: str, scope: Target, caller: CallerDep) -> dict:
    return views.episode(await caller.run(caller.mem.episode, segment(episode_id), scope))


@router.delete(
    "/subjects/{subject}/episodes/{episode_id}",
    tags=["episodes"],
    summary="Remove an episode and what only it produced; what it invalidated is current again",
    response_model=schemas.EpisodeDeleted,
    responses=answers(*SUBJECT, 404, WRITE, MODEL),
)
async def delete_episode(episode_id: str, scope: Target, caller: CallerDep) -> dict:
    return await caller.run(lambda: caller.mem.delete_episode(segment(episode_id), scope, actor=caller.actor))
