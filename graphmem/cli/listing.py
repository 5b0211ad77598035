"""`graphmem units list`, `graphmem entities list|show`: what a subject holds, page by page."""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import (
    JsonOpt,
    ProjectOpt,
    SubjectOpt,
    add_row,
    emit,
    open_mem,
    option_time,
    print_table,
    span,
    stamp,
    table,
)
from graphmem.domain.limits import MAX_K
from graphmem.domain.models import MemoryKind, Standing
from graphmem.faces import views

entities = typer.Typer(help="Entities: the names facts are about, and what is known of each.", no_args_is_help=True)

LimitOpt = Annotated[int, typer.Option("--limit", min=1, max=MAX_K, help=f"Rows on one page (1..{MAX_K}).")]
CursorOpt = Annotated[
    str | None, typer.Option("--cursor", help="Where the last page stopped: its next_cursor (as printed).")
]


def _next(cursor: str | None) -> None:
    """Tell a person how to ask for the next page (on stderr: stdout holds the rows)."""
    if cursor:
        typer.echo(f"more: --cursor {cursor}", err=True)


def list_units(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    kind: Annotated[MemoryKind | None, typer.Option("--kind", help="Only units of this kind.")] = None,
    entity: Annotated[str | None, typer.Option("--entity", help="Only units about or naming this entity.")] = None,
    contains: Annotated[
        str | None, typer.Option("--contains", help="Only units whose text holds this (any case).")
    ] = None,
    status: Annotated[
        Standing, typer.Option("--status", help="The units' standing at (T, S): ended, retracted, or all of them.")
    ] = Standing.current,
    as_of: Annotated[str | None, typer.Option("--as-of", help="World time T (ISO 8601) [default: now].")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", help="System time S (ISO 8601) [default: now].")] = None,
    limit: LimitOpt = 50,
    cursor: CursorOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A subject's units, newest first, one page at a time (the next with --cursor)."""
    valid, known = option_time(as_of, "--as-of"), option_time(known_at, "--known-at")
    with open_mem(ctx) as mem:
        page = mem.units(
            subject,
            project,
            kind=kind,
            entity=entity,
            contains=contains,
            status=status.status,
            as_of=valid,
            known_at=known,
            cursor=cursor,
            limit=limit,
        )

    def human() -> None:
        grid = table("known (UTC)", "valid (UTC)", "kind", "content", "id")
        for u in page.units:
            add_row(
                grid, stamp(u.time.created_at), span(u.time.valid_at, u.time.invalid_at), u.kind.value, u.content, u.id
            )
        print_table(grid)
        if not page.units:
            typer.echo("no units")
        _next(page.next_cursor)

    emit(views.unit_page(page), as_json, human)


@entities.command("list")
def list_entities(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    prefix: Annotated[str, typer.Option("--prefix", help="Only names starting with this (any case).")] = "",
    limit: LimitOpt = 50,
    cursor: CursorOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A subject's entities by name, with other spellings, facts that hold and last change."""
    with open_mem(ctx) as mem:
        page = mem.entities(subject, project, prefix=prefix, cursor=cursor, limit=limit)

    def human() -> None:
        grid = table("name", "also written", "facts", "last change (UTC)")
        for e in page.entities:
            add_row(grid, e.name, ", ".join(e.aliases), str(e.facts), stamp(e.last_change))
        print_table(grid)
        if not page.entities:
            typer.echo("no entities")
        _next(page.next_cursor)

    emit(views.entity_page(page), as_json, human)


@entities.command("show")
def show_entity(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The entity's name (any case or spacing).")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One entity: its facts that hold now, then its timeline (ended and retracted facts too)."""
    with open_mem(ctx) as mem:
        info = mem.entity(name, subject, project)
    shown = views.entity_view(info)

    def human() -> None:
        e = info["entity"]
        also = f" (also written {', '.join(e.aliases)})" if e.aliases else ""
        typer.echo(f"{e.name}{also}: {e.facts} fact(s) hold now; last change {stamp(e.last_change) or 'none'}")
        for u in info["facts"]:
            typer.echo(f"  {u.content}  [{span(u.time.valid_at, u.time.invalid_at)}] {u.id}")
        grid = table("valid (UTC)", "believed", "fact", "id")
        for entry in shown["history"]:
            believed = "yes" if entry["believed"] else f"until {entry['believed_until']}"
            add_row(
                grid,
                f"{entry['valid_at'] or '…'} → {entry['invalid_at'] or 'open'}",
                believed,
                entry["content"],
                entry["id"],
            )
        typer.echo("timeline:")
        print_table(grid)

    emit(shown, as_json, human)
