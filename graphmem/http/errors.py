"""Errors as the API shows them: ``{"error": {"code": ..., "message": one line}}``, never a
stack trace.

graphmem's own errors map by class (the first match of ``STATUSES`` wins, so a subclass comes
before its base); request validation is 400 for a body that is not JSON and 422 for a value
that breaks the schema; anything unexpected is 500 with a fixed message (the details go to the
server log only).
"""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match

from graphmem.errors import (
    BackendError,
    ConfigurationError,
    Conflict,
    GraphMemError,
    InvalidInput,
    NotFound,
    ScopeViolation,
    Unavailable,
    error_line,
)
from graphmem.http.schemas import ErrorBody

log = logging.getLogger("graphmem.http")

#: graphmem error class -> (status, code).
STATUSES: tuple[tuple[type[Exception], int, str], ...] = (
    (ScopeViolation, 403, "forbidden"),
    (InvalidInput, 422, "invalid_input"),
    (NotFound, 404, "not_found"),
    (Conflict, 409, "conflict"),
    (Unavailable, 503, "unavailable"),
    # An index rebuild in progress or an index built with another model: retry once repaired.
    (ConfigurationError, 503, "unavailable"),
    (BackendError, 502, "backend_error"),
    (GraphMemError, 500, "internal"),
    (ValueError, 422, "invalid_input"),
)

#: Codes of the statuses Starlette raises itself (unknown route, wrong method).
HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "invalid_input",
    501: "not_implemented",
    503: "unavailable",
}


#: What each status a route may answer means, as /openapi.json says it.
MEANINGS = {
    400: "The body is not JSON or not a JSON object (an import: a line that is not), or a required confirmation "
    "is missing.",
    401: "Missing, unknown or revoked API key.",
    403: "The key does not hold the subject (or shared:global, for include_shared), or the action needs an admin key.",
    404: "No such record in the subject.",
    409: "The write conflicts with what is stored (an episode id with other content, a subject erased meanwhile).",
    413: "The body is over GRAPHMEM_HTTP_MAX_BODY bytes, or it carries more episodes than GRAPHMEM_HTTP_MAX_EPISODES.",
    415: "The body's Content-Type is not one this operation takes.",
    421: "On a loopback address: the Host header does not name this machine.",
    422: "A value breaks the schema or a rule it cannot express (a subject that is not TYPE:ID, a time that is not "
    "ISO 8601, a block over its budget).",
    502: "A model backend (embeddings or an LLM) failed.",
    503: "Neo4j unreachable, the server busy, or the request over GRAPHMEM_HTTP_TIMEOUT (Retry-After).",
}


def answers(*statuses: int) -> dict[int | str, dict]:
    """A route's ``responses=``: each status it may answer besides its success, with the error
    body (421 on every route: a loopback server checks every request's Host)."""
    return {status: {"model": ErrorBody, "description": MEANINGS[status]} for status in sorted({421, *statuses})}


class ApiError(Exception):
    """A refusal with its status, code and one-line message (raised by routes and guards)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


def respond(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body(code, message), status_code=status, headers=headers)


def status_of(exc: Exception) -> tuple[int, str]:
    return next((status, code) for cls, status, code in STATUSES if isinstance(exc, cls))


def refusal_of(exc: Exception) -> ApiError:
    """A graphmem error (or ValueError) as the refusal the API answers with, logged when it is
    the server's failure."""
    status, code = status_of(exc)
    if status >= 500:
        log.warning("request failed: %s", error_line(exc))
    return ApiError(status, code, error_line(exc))


def validation_line(exc: RequestValidationError) -> str:
    """The first invalid value as ``where: what`` (``episodes.0``, ``k``), like ``error_line``."""
    errors = exc.errors()
    first = errors[0]
    # The first step is where the value came from (body, query, path): a field may bear that
    # name too (recall's "query"), so only the first step is dropped.
    loc = [str(p) for p in first.get("loc", ())[1:]]
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{'.'.join(loc) or 'body'}: {message}{more}"


def allowed(request: Request) -> list[str]:
    """Every method the request's path takes: Starlette's 405 names only those of the first
    route on the path, and each method of a path is a route of its own."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return sorted(methods)


def install(app) -> None:
    """Register the handlers that turn every failure into the error body."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return respond(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        if first.get("type") == "json_invalid":
            return respond(400, "bad_request", f"the body is not valid JSON: {first.get('ctx', {}).get('error', '')}")
        if tuple(first.get("loc", ())) == ("body",):  # no body, or not a JSON object
            return respond(400, "bad_request", "the body must be a JSON object (Content-Type: application/json)")
        return respond(422, "invalid_input", validation_line(exc))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            headers = {**(headers or {}), "Allow": ", ".join(allowed(request))}
        return respond(exc.status_code, HTTP_CODES.get(exc.status_code, "error"), str(exc.detail), headers)

    for cls in (GraphMemError, ValueError):

        @app.exception_handler(cls)
        async def _graphmem(_: Request, exc: Exception) -> JSONResponse:
            refusal = refusal_of(exc)
            return respond(refusal.status, refusal.code, refusal.message)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises it after this response, so the server logs the traceback.
        return respond(500, "internal", "internal error: the server log has the details")
