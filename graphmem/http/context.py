"""What every ``/v1`` route takes from its request: the ``Caller`` (memory, key, gate), the
scope its path names, path segments and cursors, the statuses it may answer, and the refusal of
query parameters it does not take.

Path parameters arrive as sent (``guard.RawPath``) and are unquoted here once, so subjects and
ids may hold any character (``user%3Aalice``, ``doc%2F7``). A subject's project is the query
parameter ``project``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any
from urllib.parse import unquote

from fastapi import APIRouter, Depends, Query, Request
from fastapi import Path as PathParam
from fastapi.security import HTTPBearer
from pydantic.json_schema import JsonDict

from graphmem.api import MAX_OFFSET, GraphMem, as_scope
from graphmem.domain.keys import holds, subject_name
from graphmem.domain.limits import MAX_K
from graphmem.domain.models import Scope, SubjectType
from graphmem.errors import quoted
from graphmem.http import schemas
from graphmem.http.config import HttpConfig
from graphmem.http.errors import ApiError
from graphmem.http.guard import Gate
from graphmem.http.jobs import Jobs

#: The actor of writes made by a server without keys (``--insecure-no-auth``).
OPEN_ACTOR = "http"
#: What a route may answer besides its success (``errors.answers``): every /v1 request is
#: authenticated (401, or 503 when the keys cannot be read) and refused for a query parameter
#: it does not take or given twice (422), one naming a subject is refused
#: for a subject the key does not hold (403) or one that is not TYPE:ID (422), and one with a
#: JSON body for a body that is not one (400), too large (413) or breaking the schema (422).
KEYED = (401, 422, 503)
SUBJECT = (*KEYED, 403, 422)
BODY = (400, 413, 422)
#: A write still running at its request's timeout: a job to poll (``Jobs``).
LATE = {"model": schemas.Job, "description": "Still running at GRAPHMEM_HTTP_TIMEOUT: poll Location, /v1/jobs/{id}."}
#: Statuses of what writes, and of what embeds text or calls a model: a conflict, a backend failing.
WRITE, MODEL = 409, 502


class Caller:
    """One request's memory, key and gate."""

    def __init__(self, request: Request):
        self.mem: GraphMem = request.app.state.mem
        self.gate: Gate = request.app.state.gate
        self.jobs: Jobs = request.app.state.jobs
        self.config: HttpConfig = request.app.state.config
        self.key = request.scope.get("state", {}).get("key")

    @property
    def actor(self) -> str:
        """Who the request's writes are recorded as: its key id."""
        return self.key.id if self.key is not None else OPEN_ACTOR

    @property
    def admin(self) -> bool:
        return self.key is None or self.key.admin

    async def run(self, fn: Callable[..., Any], *args: Any, late: Scope | None = None) -> Any:
        """``fn(*args)`` through the gate; a write of ``late`` still running at the timeout
        becomes a job (202) instead of a 503 for work that then completes."""
        on_time_out = None if late is None else partial(self.jobs.add, self.mem, self.actor, late)
        return await self.gate.run(fn, *args, who=self.actor, on_time_out=on_time_out)

    def check_shared(self, include_shared: bool) -> None:
        """Refuse (403) ``include_shared`` when the key does not hold the shared subject: it
        reads that subject."""
        if include_shared and self.key is not None and not holds(self.key, self.mem.shared):
            raise ApiError(
                403,
                "forbidden",
                f"key {self.key.id} does not hold subject {subject_name(self.mem.shared)}: include_shared reads it",
            )


#: What /openapi.json says of a subject in a path (documented only: the path is routed as sent,
#: percent-encoded, and ``Scope.parse`` checks it, with rules no pattern can say).
SUBJECT_SCHEMA = {"pattern": f"^({'|'.join(t.value for t in SubjectType)}):"}
#: A time in a query or as text, read by ``parse_optional_time`` (blank: not given).
TIME_SCHEMA: JsonDict = {"format": "date-time"}


def target(
    subject: Annotated[
        str,
        PathParam(
            json_schema_extra=SUBJECT_SCHEMA,
            description=("TYPE:ID, percent-encoded (user%3Aalice); the id is visible text in one script."),
        ),
    ],
    project: Annotated[str | None, Query(description="The subject's project.")] = None,
) -> Scope:
    """The scope a path names: its URL-encoded ``TYPE:ID`` and the ``project`` parameter."""
    return as_scope(unquote(subject), project)


CallerDep = Annotated[Caller, Depends(Caller)]
Target = Annotated[Scope, Depends(target)]


def segment(value: str) -> str:
    """A path parameter as it was meant (sent URL-encoded, routed raw)."""
    return unquote(value)


#: A page's cursor: the ``next_cursor`` of the page before (digits).
Cursor = Annotated[
    str | None,
    Query(
        json_schema_extra={"pattern": f"^[0-9]{{0,{len(str(MAX_OFFSET)) - 1}}}$"},
        description="The next_cursor of the page before.",
    ),
]


#: How many rows a page holds.
PageLimit = Annotated[int, Query(ge=1, le=MAX_K)]


def offset_of(cursor: str | None) -> int:
    if not cursor:
        return 0
    # Digits of the offsets the facade takes (bounded before int() reads a long string).
    if not (
        cursor.isascii() and cursor.isdigit() and len(cursor) <= len(str(MAX_OFFSET)) and int(cursor) <= MAX_OFFSET
    ):
        raise ApiError(422, "invalid_input", "cursor: not a cursor this API returned")
    return int(cursor)


def query_names(dependant: Any) -> set[str]:
    """The query parameters a route (its FastAPI dependant) takes, its dependencies' included."""
    return {p.alias for p in dependant.query_params}.union(*(query_names(d) for d in dependant.dependencies))


def plain_query(request: Request) -> None:
    """Refuse a query parameter the route does not take (as a body's unknown field is: a
    misspelt ``projet`` would read the subject without its project) or one given twice (none
    is a list, and which value was meant, which project to erase, is not for the server to guess)."""
    taken = query_names(request.scope["route"].dependant)
    for name, times in Counter(name for name, _ in request.query_params.multi_items()).items():
        shown = quoted(name) if name else "a parameter without a name"
        if name not in taken:
            raise ApiError(422, "invalid_input", f"{shown}: not a parameter of this operation")
        if times > 1:
            raise ApiError(422, "invalid_input", f"{shown}: given {times} times; give it once")


def v1_router() -> APIRouter:
    """A router of ``/v1`` routes: each request refused for a query parameter it does not take
    (``plain_query``). The middleware checks the key; declaring the scheme shows it in /docs."""
    return APIRouter(prefix="/v1", dependencies=[Depends(HTTPBearer(auto_error=False)), Depends(plain_query)])
