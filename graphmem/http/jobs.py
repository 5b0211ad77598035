"""Writes that outlived their request: each a job to poll at ``/v1/jobs/{id}``."""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse

from graphmem.domain.keys import subject_name
from graphmem.domain.models import Scope
from graphmem.errors import GraphMemError, error_line, quoted
from graphmem.http.errors import ApiError, status_of
from graphmem.http.errors import body as error_body

if TYPE_CHECKING:
    from graphmem.http.context import Caller

#: Jobs remembered (a write past its request's time; ``Jobs``).
JOBS_KEPT = 1024


class Jobs:
    """Writes still running when their request's time ran out, each answered 202 with a job to
    poll instead of a 503 whose work goes on. Kept in this process, the ``JOBS_KEPT`` newest; a
    job is seen only by the key that sent it (and admin keys). A write is idempotent by episode
    id, so a lost job is completed by sending the same episodes again."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, tuple[str, Scope, asyncio.Future]] = OrderedDict()

    def add(self, owner: str, scope: Scope, running: asyncio.Future) -> JSONResponse:
        job_id = uuid.uuid4().hex
        self._jobs[job_id] = (owner, scope, running)
        while len(self._jobs) > JOBS_KEPT:
            self._jobs.popitem(last=False)
        return JSONResponse(self.view(job_id), status_code=202, headers={"Location": f"/v1/jobs/{job_id}"})

    def view(self, job_id: str) -> dict:
        _, scope, running = self._jobs[job_id]
        out: dict[str, Any] = {
            "id": job_id,
            "subject": subject_name(scope),
            "project": scope.project_id,
            "status": "running",
        }
        if running.done():
            failure = running.exception()
            if failure is None:
                out.update(status="done", result=running.result())
            else:  # as a request would have been answered, without its log line at every poll
                code = status_of(failure)[1] if isinstance(failure, GraphMemError | ValueError) else "internal"
                out.update(status="failed", **error_body(code, error_line(failure)))
        return out

    def get(self, job_id: str, caller: Caller) -> dict:
        found = self._jobs.get(job_id)
        if found is None or not (caller.admin or found[0] == caller.actor):
            raise ApiError(
                404,
                "not_found",
                f"no job {quoted(job_id)} of this key "
                f"(a job lives in the process that began it, among its newest {JOBS_KEPT})",
            )
        return self.view(job_id)
