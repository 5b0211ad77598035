"""The `graphmem` command: one sub-command per noun, each a few lines over the library."""

from __future__ import annotations

import typer
from typer.core import TyperGroup

try:  # recent typer vendors click and raises its own copy of click's exceptions
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - typer before the vendored copy
    from click import exceptions as click_errors

from graphmem.cli import admin, blocks, db, exchange, index, keys, lifecycle, listing, read, serve, write
from graphmem.cli.common import connection_options, fail
from graphmem.cli.mcp import app as mcp_app
from graphmem.errors import GraphMemError


class OneLineErrors(TyperGroup):
    """The root group: a usage error (unknown option, missing or bad value) is one line,
    ``error: ...`` on stderr, exit 2, instead of a usage block, and so is a graphmem error that
    no command turned into one (a refused ``.env`` read by a group's callback, such as
    ``graphmem db``'s). Sub-commands are parsed and run inside the root's ``invoke``, so
    catching here covers every command."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click_errors.ClickException as exc:
            _usage_error(exc)

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except click_errors.ClickException as exc:
            _usage_error(exc)
        except GraphMemError as exc:
            fail(exc)


def _usage_error(exc: click_errors.ClickException):
    if isinstance(exc, click_errors.NoArgsIsHelpError):
        raise exc  # a bare noun shows its help, as asked for
    where = getattr(exc, "ctx", None)
    hint = f" (see `{where.command_path} --help`)" if where is not None else ""
    # A validator's own ValueError reads better without pydantic's "Value error, " prefix.
    message = " ".join(exc.format_message().split()).replace("Value error, ", "")
    typer.echo(f"error: {message}{hint}", err=True)
    raise typer.Exit(exc.exit_code)


app = typer.Typer(
    cls=OneLineErrors,
    pretty_exceptions_show_locals=False,
    no_args_is_help=True,
    # Plain help: rich markup would swallow bracketed text such as "[default: now]".
    rich_markup_mode=None,
    help="graphmem: temporal memory on Neo4j, for operators and scripts.",
)
app.callback()(connection_options)

app.add_typer(db.app, name="db")
app.add_typer(blocks.app, name="blocks")
app.add_typer(index.app, name="index")
app.add_typer(lifecycle.episodes, name="episodes")
app.add_typer(lifecycle.review, name="review")
app.add_typer(lifecycle.traces, name="traces")
app.add_typer(read.units, name="units")
read.units.command("list")(listing.list_units)
app.add_typer(listing.entities, name="entities")
app.add_typer(mcp_app, name="mcp")
app.add_typer(keys.app, name="keys")

app.command()(admin.init)
app.command()(admin.doctor)
app.command()(admin.stats)
app.command()(write.ingest)
app.command()(write.complete)
app.command()(write.remember)
app.command()(write.decisions)
app.command()(write.explain)
app.command()(read.recall)
app.command()(read.assemble)
app.command()(read.history)
app.command()(lifecycle.forget)
app.command()(lifecycle.archive)
app.command()(lifecycle.restore)
app.command()(lifecycle.reextract)
app.command()(serve.serve)
app.command()(write.retract)
app.command()(write.end)
app.command()(read.subjects)
app.command()(exchange.export)
app.command("import")(exchange.import_)


if __name__ == "__main__":  # pragma: no cover
    app()
