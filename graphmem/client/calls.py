"""The client's requests, free of I/O: each operation is a generator that yields ``Call`` (and
``Pause``) steps and receives each call's ``Answer``, so the sync and async clients run the same
code. An answer becomes a typed result (the API's wire models, ``graphmem.http.schemas``, or
the domain's records) or the graphmem error its status stands for."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from graphmem.domain.keys import subject_name
from graphmem.domain.models import Episode, MemoryBlock, Scope
from graphmem.errors import (
    BackendError,
    ConfigurationError,
    Conflict,
    GraphMemError,
    InvalidInput,
    NotFound,
    ScopeViolation,
    Unauthorized,
    Unavailable,
)
from graphmem.http import schemas

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
SubjectLike = str | Scope

#: What each status raises (the server's ``graphmem.http.errors.STATUSES``, read backwards).
ERRORS: dict[int, type[GraphMemError]] = {
    400: InvalidInput,
    401: Unauthorized,
    403: ScopeViolation,
    404: NotFound,
    409: Conflict,
    413: InvalidInput,
    415: InvalidInput,
    421: ConfigurationError,
    422: InvalidInput,
    502: BackendError,
    503: Unavailable,
}
#: The status each error code of the API stands for (a failed job names only its code).
CODES = {
    "invalid_input": 422,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "backend_error": 502,
    "unavailable": 503,
}
#: Episodes per request: below the server's default cap (GRAPHMEM_HTTP_MAX_EPISODES, 1,000).
EPISODES_PER_REQUEST = 500
#: Seconds between polls of a write that became a job (202), doubling up to the last.
POLLS = (0.2, 0.5, 1.0, 2.0)


@dataclass(frozen=True)
class Call:
    """One HTTP request. ``resend``: safe to send again after it may have reached the server
    (every write is idempotent by its episode ids or is a replacement; an ending is not)."""

    method: str
    path: str
    params: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    content: bytes | None = None
    content_type: str | None = None
    resend: bool = True


@dataclass(frozen=True)
class Answer:
    status: int
    text: str
    headers: Mapping[str, str]

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass(frozen=True)
class Pause:
    seconds: float


Steps = Generator[Call | Pause, Answer | None, T]


class ServerError(GraphMemError):
    """The server failed in a way it does not name (500, or an answer that is not its JSON)."""


def error_of(answer: Answer) -> GraphMemError:
    """The graphmem error an error answer stands for, with the server's one-line message; its
    ``status`` and ``code`` attributes say what the server answered."""
    try:
        problem = answer.json()["error"]
        code, message = str(problem["code"]), str(problem["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "http_error", f"HTTP {answer.status}: {' '.join(answer.text.split())[:200]}"
    error = ERRORS.get(answer.status, ServerError)(message)
    error.status, error.code = answer.status, code  # type: ignore[attr-defined]
    return error


def checked(answer: Answer | None) -> Answer:
    assert answer is not None  # a Call is always answered
    if answer.status >= 400:
        raise error_of(answer)
    return answer


def one(call: Call, model: type[M]) -> Steps[M]:
    """A single call answered with ``model``."""
    return model.model_validate((checked((yield call))).json())


def scoped(subject: SubjectLike, project: str | None) -> tuple[str, str | None]:
    """``TYPE:ID`` and the project a subject names (a Scope's own project unless one is given)."""
    if isinstance(subject, Scope):
        return subject_name(subject), project if project is not None else subject.project_id
    if not isinstance(subject, str):
        raise InvalidInput(f"subject: a TYPE:ID string or a Scope, not {type(subject).__name__}")
    return subject, project


def segment(value: str) -> str:
    """One path segment, percent-encoded; dots too when it is only dots, which a URL would
    otherwise read as "this" or "up one" (an episode id ``..`` naming the subject itself)."""
    quoted = quote(value, safe="")
    return quoted.replace(".", "%2E") if quoted.strip(".") == "" else quoted


def path(subject: SubjectLike, project: str | None, *rest: str) -> tuple[str, dict[str, Any]]:
    """The URL path of a subject's resource (every segment percent-encoded) and its ``project``."""
    name, project = scoped(subject, project)
    segments = "/".join(segment(s) for s in (name, *rest))
    return f"/v1/subjects/{segments}", ({"project": project} if project is not None else {})


def instant(value: datetime | None, name: str) -> str | None:
    """An aware datetime as ISO 8601; a naive one is refused, as the facade refuses it."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{name}: a timezone-aware datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{name}: a naive datetime; give it a timezone")
    return value.isoformat()


def record(model: type[M], data: Mapping[str, Any]) -> M:
    """A domain record from its JSON form (``scope`` and ``project`` as one ``Scope``); a view's
    extra field (a block's ``tokens``) is left out."""
    fields = {k: v for k, v in data.items() if k in model.model_fields}
    fields["scope"] = Scope.parse(data["scope"], data.get("project"), stored=True)
    return model.model_validate(fields)


def episode_line(episode: Episode) -> dict[str, Any]:
    """An episode as the API's episode item: its id always, so a resent write is found stored."""
    return {
        "id": episode.id,
        "occurred_at": episode.occurred_at.isoformat(),
        "raw": episode.raw,
        "channel": episode.channel,
        "facts": [f.model_dump(mode="json", exclude_defaults=True) for f in episode.facts],
    }


def write(call: Call, model: type[M]) -> Steps[M]:
    """A write answered with ``model``; one that outlives its request (202, a job) is polled
    until it ends, and answers with the job's result or raises its error."""
    answer = checked((yield call))
    if answer.status != 202:
        return model.model_validate(answer.json())
    job = schemas.Job.model_validate(answer.json())
    for poll in range(10**9):
        if job.status == "failed" and job.error is not None:
            failed = {"error": job.error.model_dump()}
            raise error_of(Answer(CODES.get(job.error.code, 500), json.dumps(failed), {}))
        if job.status == "done" and job.result is not None:
            return model.model_validate(job.result.model_dump())
        yield Pause(POLLS[min(poll, len(POLLS) - 1)])
        job = yield from one(Call("GET", f"/v1/jobs/{segment(job.id)}"), schemas.Job)
    raise AssertionError("unreachable")


def refused(report: schemas.Ingested) -> schemas.Ingested:
    """A one-episode write's report, or the facade's error for its episode: the API reports a
    refused item in ``failed`` (a reused id as ``episode_conflict`` words it)."""
    if report.failed:
        why = report.failed[0].error
        raise (Conflict if "already exists with different content" in why else InvalidInput)(why)
    return report


def merged(reports: list[schemas.Ingested], offsets: list[int]) -> schemas.Ingested:
    """Reports of an ingest sent in several requests, as one (failed items by their index in
    the whole)."""
    if len(reports) == 1:
        return reports[0]
    decisions: dict[str, int] = {}
    for report in reports:
        for op, n in report.decisions.model_dump().items():
            decisions[op] = decisions.get(op, 0) + n
    return schemas.Ingested.model_validate(
        {
            "episodes": sum(r.episodes for r in reports),
            "new_episodes": sum(r.new_episodes for r in reports),
            "decisions": decisions,
            "unit_ids": [u for r in reports for u in r.unit_ids],
            "extraction_failed": [f.model_dump() for r in reports for f in r.extraction_failed],
            "reviews": [i for r in reports for i in r.reviews],
            "failed": [
                {"index": f.index + offset, "error": f.error} for r, offset in zip(reports, offsets) for f in r.failed
            ],
        }
    )


def ingest(episodes: list[Episode], extractor: str | None) -> Steps[schemas.Ingested]:
    """Episodes written by subject and project, in requests of at most ``EPISODES_PER_REQUEST``."""
    reports, offsets = [], []
    for start in range(0, len(episodes), EPISODES_PER_REQUEST):
        chunk = episodes[start : start + EPISODES_PER_REQUEST]
        groups: dict[Scope, list[int]] = {}
        for n, episode in enumerate(chunk):
            groups.setdefault(episode.scope, []).append(n)
        for scope, where in groups.items():
            url, params = path(scope, scope.project_id, "episodes")
            body = {"episodes": [episode_line(chunk[n]) for n in where], "extractor": extractor}
            report = yield from write(Call("POST", url, params, body), schemas.Ingested)
            # Failed items named by their index in ``episodes``, wherever they were sent.
            reports.append(
                report.model_copy(
                    update={"failed": [f.model_copy(update={"index": where[f.index]}) for f in report.failed]}
                )
            )
            offsets.append(start)
    if not reports:
        return schemas.Ingested.model_validate(
            {
                "episodes": 0,
                "new_episodes": 0,
                "decisions": {},
                "unit_ids": [],
                "extraction_failed": [],
                "reviews": [],
                "failed": [],
            }
        )
    return merged(reports, offsets)


def paged(call: Call, key: str, limit: int, page: int = 100) -> Steps[list[dict[str, Any]]]:
    """Up to ``limit`` rows of a cursor-paged listing, following ``next_cursor``."""
    rows: list[dict[str, Any]] = []
    cursor: str | None = None
    while len(rows) < limit:
        params = {**call.params, "limit": min(page, limit - len(rows)), **({"cursor": cursor} if cursor else {})}
        answer = checked((yield Call(call.method, call.path, params)))
        data = answer.json()
        rows += data[key]
        cursor = data.get("next_cursor")
        if not cursor:
            break
    return rows


def episodes(subject: SubjectLike, project: str | None, offset: int, limit: int) -> Steps[list[Episode]]:
    url, params = path(subject, project, "episodes")
    if offset:
        params["cursor"] = str(offset)
    rows = yield from paged(Call("GET", url, params), "episodes", limit)
    return [record(Episode, r) for r in rows]


def blocks(subject: SubjectLike, project: str | None) -> Steps[list[MemoryBlock]]:
    url, params = path(subject, project, "blocks")
    return [record(MemoryBlock, b) for b in checked((yield Call("GET", url, params))).json()["blocks"]]


def recorded(model: type[M], call: Call) -> Steps[M]:
    """A single call answered with one record of ``model`` in its JSON form."""
    return record(model, checked((yield call)).json())


def mapped(steps: Steps[T], fn: Callable[[T], Any]) -> Steps[Any]:
    """``steps`` with ``fn`` applied to their result."""
    return fn((yield from steps))


def export(subject: SubjectLike, project: str | None) -> Steps[list[dict[str, Any]]]:
    url, params = path(subject, project, "export")
    return [json.loads(line) for line in checked((yield Call("GET", url, params))).text.splitlines() if line]


def nothing(call: Call) -> Steps[None]:
    checked((yield call))
    return None


def trace(call: Call) -> Steps[schemas.TraceView | None]:
    try:
        return (yield from one(call, schemas.TraceView))
    except NotFound:
        return None
