"""The routes that list what a subject holds: its units and entities page by page (cursors the
facade makes: ``graphmem.api.listing``), and one entity with its facts and timeline."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from graphmem.api.listing import MAX_CURSOR_CHARS
from graphmem.domain.models import MAX_FILTER_CHARS, MemoryKind, Standing
from graphmem.domain.times import parse_optional_time
from graphmem.faces import views
from graphmem.http import schemas
from graphmem.http.context import SUBJECT, TIME_SCHEMA, CallerDep, PageLimit, Target, segment, v1_router
from graphmem.http.errors import answers

router = v1_router()


#: The next_cursor of the page before, as it was given.
ListingCursor = Annotated[
    str | None,
    Query(
        pattern=f"^[A-Za-z0-9_-]{{1,{MAX_CURSOR_CHARS}}}$",
        description="The next_cursor of the page before (same filters).",
    ),
]
FilterText = Annotated[str | None, Query(min_length=1, max_length=MAX_FILTER_CHARS)]


@router.get(
    "/subjects/{subject}/units",
    tags=["listing"],
    summary="A page of the subject's units, newest first",
    response_model=schemas.UnitPage,
    responses=answers(*SUBJECT),
)
async def list_units(
    scope: Target,
    caller: CallerDep,
    kind: MemoryKind | None = None,
    entity: Annotated[FilterText, Query(description="Units about or naming this entity.")] = None,
    contains: Annotated[FilterText, Query(description="Units whose text holds this, in any case.")] = None,
    status: Annotated[Standing, Query(description="The units' standing at (as_of, known_at).")] = Standing.current,
    as_of: Annotated[str | None, Query(json_schema_extra=TIME_SCHEMA)] = None,
    known_at: Annotated[str | None, Query(json_schema_extra=TIME_SCHEMA)] = None,
    cursor: ListingCursor = None,
    limit: PageLimit = 50,
) -> dict:
    valid, known = parse_optional_time(as_of, "as_of"), parse_optional_time(known_at, "known_at")

    def work() -> dict:
        page = caller.mem.units(
            scope,
            kind=kind,
            entity=entity,
            contains=contains,
            status=status.status,
            as_of=valid,
            known_at=known,
            cursor=cursor,
            limit=limit,
        )
        return views.unit_page(page)

    return await caller.run(work)


@router.get(
    "/subjects/{subject}/entities",
    tags=["listing"],
    summary="A page of the subject's entities by name (a prefix completes one)",
    response_model=schemas.EntityPage,
    responses=answers(*SUBJECT),
)
async def list_entities(
    scope: Target,
    caller: CallerDep,
    prefix: Annotated[str, Query(max_length=MAX_FILTER_CHARS, description="Names starting with this.")] = "",
    cursor: ListingCursor = None,
    limit: PageLimit = 50,
) -> dict:
    return await caller.run(
        lambda: views.entity_page(caller.mem.entities(scope, prefix=prefix, cursor=cursor, limit=limit))
    )


@router.get(
    "/subjects/{subject}/entities/{name}",
    tags=["listing"],
    summary="One entity: its facts that hold now and its timeline",
    response_model=schemas.EntityView,
    responses=answers(*SUBJECT, 404),
)
async def get_entity(name: Annotated[str, Path(max_length=MAX_FILTER_CHARS)], scope: Target, caller: CallerDep) -> dict:
    return await caller.run(lambda: views.entity_view(caller.mem.entity(segment(name), scope)))
