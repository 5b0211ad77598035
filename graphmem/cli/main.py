"""The `graphmem` command: one sub-command per noun, each a few lines over the library."""

from __future__ import annotations

import importlib

import typer
import typer._click as click  # typer vendors click and raises its own copy of click's exceptions
import typer.main
from typer._click import exceptions as click_errors
from typer.core import TyperGroup
from typer.models import CommandInfo, TyperInfo

from graphmem.cli.common import connection_options, fail
from graphmem.errors import GraphMemError

#: Every command, in the order help lists them: name -> (module of graphmem.cli, attribute), a
#: function or a sub-``Typer``. A module is imported only when its command runs or a help lists
#: it, so `graphmem recall` never loads the local server, the MCP face or the import pipeline:
#: start-up time is most of a short command's wall time (issue 42).
COMMANDS = {
    "init": ("admin", "init"),
    "doctor": ("admin", "doctor"),
    "stats": ("admin", "stats"),
    "ingest": ("write", "ingest"),
    "complete": ("write", "complete"),
    "remember": ("write", "remember"),
    "decisions": ("write", "decisions"),
    "explain": ("write", "explain"),
    "recall": ("read", "recall"),
    "assemble": ("read", "assemble"),
    "history": ("read", "history"),
    "forget": ("lifecycle", "forget"),
    "archive": ("lifecycle", "archive"),
    "restore": ("lifecycle", "restore"),
    "reextract": ("lifecycle", "reextract"),
    "serve": ("serve", "serve"),
    "retract": ("write", "retract"),
    "end": ("write", "end"),
    "subjects": ("read", "subjects"),
    "export": ("exchange", "export"),
    "import": ("exchange", "import_"),
    "db": ("db", "app"),
    "blocks": ("blocks", "app"),
    "index": ("index", "app"),
    "episodes": ("lifecycle", "episodes"),
    "review": ("lifecycle", "review"),
    "traces": ("lifecycle", "traces"),
    "units": ("listing", "units"),  # `units show` from read, `units list` added by listing
    "entities": ("listing", "entities"),
    "mcp": ("mcp", "app"),
    "keys": ("keys", "app"),
}


class OneLineErrors(TyperGroup):
    """The root group: a usage error (unknown option, missing or bad value) is one line,
    ``error: ...`` on stderr, exit 2, instead of a usage block, and so is a graphmem error that
    no command turned into one (a refused ``.env`` read by a group's callback, such as
    ``graphmem db``'s). Sub-commands are parsed and run inside the root's ``invoke``, so
    catching here covers every command. Commands of ``COMMANDS`` are built on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *(name for name in COMMANDS if name not in self.commands)]

    def get_command(self, ctx: click.Context, cmd_name: str):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.commands[cmd_name] = _build(cmd_name)
        return super().get_command(ctx, cmd_name)

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click_errors.ClickException as exc:
            _usage_error(exc)

    def invoke(self, ctx: click.Context):
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


def _build(name: str) -> click.Command:
    """The click command of ``COMMANDS[name]``, built as ``app.command`` or ``app.add_typer`` would."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(f"graphmem.cli.{module}"), attribute)
    if isinstance(target, typer.Typer):
        return typer.main.get_group_from_info(
            TyperInfo(target, name=name),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
            suggest_commands=app.suggest_commands,
        )
    return typer.main.get_command_from_info(
        CommandInfo(name=name, callback=target),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


app = typer.Typer(
    cls=OneLineErrors,
    pretty_exceptions_show_locals=False,
    no_args_is_help=True,
    # Plain help: rich markup would swallow bracketed text such as "[default: now]".
    rich_markup_mode=None,
    help="graphmem: temporal memory on Neo4j, for operators and scripts.",
)
app.callback()(connection_options)


if __name__ == "__main__":  # pragma: no cover
    app()
