"""The routes of keys and whole subjects: who a key is, the subjects it holds, erasure, export
and import."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import Query, Request
from fastapi.responses import Response

from graphmem.domain.keys import subject_name
from graphmem.errors import InvalidInput, error_line
from graphmem.faces import views
from graphmem.faces.episode_lines import json_lines  # the CLI's lines, shared with import
from graphmem.http import schemas
from graphmem.http.context import BODY, KEYED, MODEL, SUBJECT, WRITE, CallerDep, Target, v1_router
from graphmem.http.errors import ApiError, answers

#: The media type of an export (JSON Lines).
NDJSON = "application/x-ndjson"
#: What an import body may be sent as: never a type a page elsewhere may send without asking
#: first (text/plain, a form), so a browser cannot post an import to a server on this machine.
IMPORT_TYPES = (NDJSON, "application/jsonl", "application/json")

router = v1_router()


@router.get(
    "/me",
    tags=["keys"],
    summary="The key this request carries (its id, subjects, admin)",
    response_model=schemas.Me,
    responses=answers(*KEYED),
)
async def me(caller: CallerDep) -> dict:
    return views.whoami(caller.key)


@router.get(
    "/subjects",
    tags=["subjects"],
    summary="Every subject the key holds, with counts",
    response_model=schemas.Subjects,
    responses=answers(*KEYED),
)
async def subjects(caller: CallerDep) -> dict:
    def work() -> dict:
        held = None if caller.admin else set(caller.key.subjects)
        return {
            "subjects": [
                views.subject(s["scope"], {k: n for k, n in s.items() if k != "scope"})
                for s in caller.mem.subjects()
                if held is None or subject_name(s["scope"]) in held
            ]
        }

    return await caller.run(work)


@router.delete(
    "/subjects/{subject}",
    tags=["subjects"],
    summary="Erase the subject (all its projects, or the one named); needs confirm=true",
    response_model=schemas.Erasure,
    responses=answers(*SUBJECT, 400, WRITE),
)
async def forget(scope: Target, caller: CallerDep, confirm: bool = False) -> dict:
    if not confirm:
        raise ApiError(400, "bad_request", f"erasing {scope} is for good: add ?confirm=true")
    return await caller.run(lambda: caller.mem.forget(scope, project=scope.project_id, actor=caller.actor))


@router.get(
    "/subjects/{subject}/export",
    tags=["subjects"],
    summary="The subject as JSON Lines (`graphmem export`)",
    response_class=Response,
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}}, **answers(*SUBJECT)},
)
async def export(scope: Target, caller: CallerDep) -> Response:
    # Read whole within the gate (its concurrency cap and timeout hold for exports too).
    text = await caller.run(lambda: "".join(json.dumps(r) + "\n" for r in caller.mem.export(scope)))
    return Response(text, media_type=NDJSON)


@router.post(
    "/import",
    tags=["subjects"],
    summary="Import an export, JSON Lines as `graphmem import` reads it (admin key)",
    openapi_extra={"requestBody": {"required": True, "content": {t: {} for t in IMPORT_TYPES}}},
    response_model=schemas.Imported,
    responses=answers(*KEYED, *BODY, 403, 415, WRITE, MODEL),
)
async def import_(
    request: Request,
    caller: CallerDep,
    force: Annotated[bool, Query(description="Import a subject erased from this database.")] = False,
) -> dict:
    # The key was checked for being an admin key before (guard.Authenticate).
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media not in IMPORT_TYPES:
        raise ApiError(415, "unsupported_media_type", f"send the export as Content-Type: {' or '.join(IMPORT_TYPES)}")
    try:
        lines = (await request.body()).decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_request", f"the body is not UTF-8 text ({exc.reason})") from None

    def work() -> dict:
        try:
            records = list(json_lines(lines, "body"))
        except InvalidInput as exc:  # a line that is not JSON, as a body that is not
            raise ApiError(400, "bad_request", error_line(exc)) from None
        return caller.mem.import_(caller.mem.read_export(records), force=force)

    return await caller.run(work)
