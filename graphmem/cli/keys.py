"""`graphmem keys create|list|revoke`: the API keys of `graphmem serve` and `mcp serve`."""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import JsonOpt, emit, open_mem, shown, when
from graphmem.faces import views

app = typer.Typer(
    help="API keys for the HTTP API and MCP over HTTP (only a hash of each is stored).", no_args_is_help=True
)


@app.command()
def create(
    ctx: typer.Context,
    subject: Annotated[
        list[str] | None,
        typer.Option("--subject", "-s", help="A subject the key may read and write, TYPE:ID (repeatable)."),
    ] = None,
    admin: Annotated[bool, typer.Option("--admin", help="The key holds every subject (and may import).")] = False,
    name: Annotated[str | None, typer.Option("--name", help="A label for listings.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a key and print it once: it cannot be shown again."""
    with open_mem(ctx, check_index=False) as mem:
        key, token = mem.create_key(subject or (), admin=admin, name=name)
    shown = views.key(key, token)

    def human() -> None:
        typer.echo(token)  # alone on stdout, so `$(graphmem keys create ...)` is the key
        held = "every subject" if admin else ", ".join(key.subjects)
        typer.echo(f"key {key.id} for {held}: store it now, it is not shown again", err=True)

    emit({k: shown[k] for k in ("id", "key", "subjects", "admin", "name")}, as_json, human)


@app.command("list")
def list_(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Every key (id, name, subjects, created, revoked), never the keys themselves."""
    with open_mem(ctx, check_index=False) as mem:
        found = mem.keys()

    def human() -> None:
        for k in found:
            held = "admin" if k.admin else ", ".join(k.subjects) or "-"
            state = f"revoked {when(k.revoked_at)}" if k.revoked_at else "live"
            typer.echo(f"{k.id} {shown(k.name or '-')} [{held}] created {when(k.created_at)} {state}")
        if not found:
            typer.echo("no keys")

    emit({"keys": [views.key(k) for k in found]}, as_json, human)


@app.command()
def revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key id (from `keys list`).")],
    as_json: JsonOpt = False,
) -> None:
    """Revoke a key at once (every server using this database refuses it from now on)."""
    with open_mem(ctx, check_index=False) as mem:
        key = mem.revoke_key(key_id)
    emit(views.key(key), as_json, f"revoked key {key.id} at {when(key.revoked_at)}")
