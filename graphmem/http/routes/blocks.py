"""The routes of a subject's resident blocks."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from graphmem.faces import views
from graphmem.http import schemas
from graphmem.http.bodies import BlockIn
from graphmem.http.context import BODY, SUBJECT, WRITE, CallerDep, Target, segment, v1_router
from graphmem.http.errors import ApiError, answers

router = v1_router()


@router.get(
    "/subjects/{subject}/blocks",
    tags=["blocks"],
    summary="Every resident block",
    response_model=schemas.Blocks,
    responses=answers(*SUBJECT),
)
async def list_blocks(scope: Target, caller: CallerDep) -> dict:
    return {"blocks": [views.block(b) for b in await caller.run(caller.mem.list_blocks, scope)]}


@router.get(
    "/subjects/{subject}/blocks/{label}",
    tags=["blocks"],
    summary="One block",
    response_model=schemas.Block,
    responses=answers(*SUBJECT, 404),
)
async def get_block(label: str, scope: Target, caller: CallerDep) -> dict:
    return views.block(await caller.run(caller.mem.get_block, scope, segment(label)))


@router.put(
    "/subjects/{subject}/blocks/{label}",
    tags=["blocks"],
    summary="Create or replace a block within its budget",
    response_model=schemas.WrittenBlock,
    responses=answers(*SUBJECT, *BODY, WRITE),
)
async def put_block(label: str, body: BlockIn, scope: Target, caller: CallerDep) -> dict:
    if (body.admin or body.writable is not None) and not caller.admin:
        raise ApiError(403, "forbidden", "changing writability or a read-only block needs an admin key")

    def work() -> dict:
        block = caller.mem.set_block(
            scope,
            segment(label),
            body.value,
            token_budget=body.token_budget,
            description=body.description,
            writable=body.writable,
            truncate=body.truncate,
            admin=body.admin,
        )
        return views.block(block, caller.mem.count_tokens(block.value))

    return await caller.run(work)


@router.delete(
    "/subjects/{subject}/blocks/{label}",
    tags=["blocks"],
    summary="Delete a block",
    response_model=schemas.BlockDeleted,
    responses=answers(*SUBJECT, 404, WRITE),
)
async def delete_block(
    label: str,
    scope: Target,
    caller: CallerDep,
    admin: Annotated[bool, Query(description="Delete a read-only block (admin key only).")] = False,
) -> dict:
    if admin and not caller.admin:
        raise ApiError(403, "forbidden", "deleting a read-only block needs an admin key")
    await caller.run(lambda: caller.mem.delete_block(scope, segment(label), admin=admin))
    return {"deleted": True, "label": segment(label)}
