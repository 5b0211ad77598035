"""`graphmem blocks list|show|set|delete`: resident blocks (always in context)."""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import JsonOpt, ProjectOpt, SubjectOpt, emit, open_mem, shown
from graphmem.domain.limits import MAX_BLOCK_TOKENS
from graphmem.faces import views

app = typer.Typer(help="Resident blocks: always in context, each within its token budget.", no_args_is_help=True)

LabelOpt = Annotated[str, typer.Option("--label", "-l", help="The block label.")]


@app.command("list")
def list_(ctx: typer.Context, subject: SubjectOpt, project: ProjectOpt = None, as_json: JsonOpt = False) -> None:
    """Every block of a subject."""
    with open_mem(ctx) as mem:
        found = mem.list_blocks(subject, project)

    def human() -> None:
        for b in found:
            ro = "" if b.writable else ", read-only"
            about = f": {shown(b.description)}" if b.description else ""
            typer.echo(f"{shown(b.label)} (budget {b.token_budget}{ro}){about}")
        if not found:
            typer.echo("no blocks")

    emit({"blocks": [views.block(b) for b in found]}, as_json, human)


@app.command()
def show(
    ctx: typer.Context, label: LabelOpt, subject: SubjectOpt, project: ProjectOpt = None, as_json: JsonOpt = False
) -> None:
    """One block's value."""
    with open_mem(ctx) as mem:
        block = mem.get_block(subject, label, project)
    emit(views.block(block), as_json, shown(block.value, lines=True))


@app.command("set")
def set_(
    ctx: typer.Context,
    label: LabelOpt,
    value: Annotated[str, typer.Option("--value", help="The new value.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=1, help=f"Token budget, 1..{MAX_BLOCK_TOKENS} (required for a new block)."),
    ] = None,
    description: Annotated[str | None, typer.Option("--description", help="What the block is for.")] = None,
    read_only: Annotated[
        bool | None, typer.Option("--read-only/--writable", help="Make the block read-only (or writable again).")
    ] = None,
    truncate: Annotated[bool, typer.Option("--truncate", help="Cut a value over budget instead of refusing.")] = False,
    admin: Annotated[bool, typer.Option("--admin", help="Operator override: change a read-only block.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create or replace a block; a value over budget is refused unless --truncate."""
    with open_mem(ctx) as mem:
        block = mem.set_block(
            subject,
            label,
            value,
            project,
            token_budget=budget,
            description=description,
            writable=None if read_only is None else not read_only,
            truncate=truncate,
            admin=admin,
        )
        tokens = mem.count_tokens(block.value)
    emit(views.block(block, tokens), as_json, f"set block {shown(block.label)} ({tokens}/{block.token_budget} tokens)")


@app.command()
def delete(
    ctx: typer.Context,
    label: LabelOpt,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    admin: Annotated[bool, typer.Option("--admin", help="Operator override: delete a read-only block.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete a block (a read-only one only with --admin)."""
    with open_mem(ctx) as mem:
        mem.delete_block(subject, label, project, admin=admin)
    emit({"deleted": True, "label": label}, as_json, f"deleted block {shown(label)}")
