"""Writes that outlived their request: each a job to poll at ``/v1/jobs/{id}``."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse

from graphmem.domain.keys import holds, subject_name
from graphmem.domain.models import Job, Scope, utcnow
from graphmem.errors import GraphMemError, Unavailable, error_line, quoted
from graphmem.http.errors import ApiError, status_of
from graphmem.http.errors import body as error_body

if TYPE_CHECKING:
    from graphmem.api import GraphMem
    from graphmem.http.context import Caller

#: Jobs this process also keeps in memory (its newest): it answers their polls while the
#: database cannot.
JOBS_KEPT = 1024
#: How a job of a write cut short by the server's shutdown ends.
STOPPED = {
    "error_code": "unavailable",
    "error_message": (
        "the server stopped before this write ended: send the same episodes again (what is stored "
        "is skipped), or run graphmem complete"
    ),
}

log = logging.getLogger(__name__)


class Jobs:
    """Writes still running when their request's time ran out: 202 and a job to poll, not a 503
    whose work goes on. Stored through the facade when they go late and when they end, so any
    server process on the database answers a poll; seen only by the key that sent it (and admin
    keys). A job lost with its process: send the same episodes again (idempotent by id)."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._endings: set[asyncio.Task] = set()  # held: the loop keeps only weak references

    async def add(self, mem: GraphMem, owner: str, scope: Scope, running: asyncio.Future) -> JSONResponse:
        job = self._keep(Job(id=uuid.uuid4().hex, owner=owner, scope=scope))
        await asyncio.to_thread(mem.save_job, job)
        # Only now: the ending is stored after the job, never overwritten by it.
        running.add_done_callback(lambda done: self._track(asyncio.ensure_future(self._end(mem, job, done))))
        return JSONResponse(view(job), status_code=202, headers={"Location": f"/v1/jobs/{job.id}"})

    async def get(self, mem: GraphMem, job_id: str, caller: Caller) -> dict:
        try:  # the stored job first: it is gone once its subject is erased
            job = await asyncio.to_thread(mem.job, job_id)
        except Unavailable:
            job = self._jobs.get(job_id)
        mine = job is not None and (caller.admin or (job.owner == caller.actor and holds(caller.key, job.scope)))
        if job is None or not mine:
            raise ApiError(404, "not_found", f"no job {quoted(job_id)} of this key (jobs are kept for a day)")
        return view(job)

    async def close(self, mem: GraphMem) -> None:
        """At shutdown: the writes of this process still running end with it, so their jobs say
        so instead of running for ever."""
        for job in [j for j in self._jobs.values() if j.status == "running"]:
            await self._store_end(mem, job.model_copy(update={"status": "failed", **STOPPED, "finished_at": utcnow()}))

    def _track(self, ending: asyncio.Task) -> None:
        self._endings.add(ending)
        ending.add_done_callback(self._endings.discard)

    def _keep(self, job: Job) -> Job:
        self._jobs[job.id] = job
        while len(self._jobs) > JOBS_KEPT:
            self._jobs.popitem(last=False)
        return job

    async def _end(self, mem: GraphMem, job: Job, running: asyncio.Future) -> None:
        failure = asyncio.CancelledError() if running.cancelled() else running.exception()
        if failure is None:
            ended = job.model_copy(update={"status": "done", "result": running.result(), "finished_at": utcnow()})
        else:  # as a request would have been answered, without its log line at every poll
            code = status_of(failure)[1] if isinstance(failure, GraphMemError | ValueError) else "internal"
            ended = job.model_copy(
                update={
                    "status": "failed",
                    "error_code": code,
                    "error_message": error_line(failure),
                    "finished_at": utcnow(),
                }
            )
        await self._store_end(mem, ended)

    async def _store_end(self, mem: GraphMem, ended: Job) -> None:
        if ended.id in self._jobs:
            self._keep(ended)
        try:
            if not await asyncio.to_thread(mem.end_job, ended):  # erased while its write ran
                self._jobs.pop(ended.id, None)
        except GraphMemError as exc:  # this process still answers it while Neo4j cannot
            log.warning("job %s ended %s but could not be stored: %s", ended.id, ended.status, error_line(exc))


def view(job: Job) -> dict:
    """A job as ``GET /v1/jobs/{id}`` answers it (``schemas.Job``)."""
    out: dict[str, Any] = {
        "id": job.id,
        "subject": subject_name(job.scope),
        "project": job.scope.project_id,
        "status": job.status,
    }
    if job.status == "done":
        out["result"] = job.result
    elif job.status == "failed":
        out.update(error_body(job.error_code or "internal", job.error_message or ""))
    return out
