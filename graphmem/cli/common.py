"""Shared plumbing for the CLI: connection options, the GraphMem factory, errors, times, output.

Every command is a few lines over the ``GraphMem`` facade: it opens one with ``open_mem(ctx)``,
renders the result with a ``graphmem.faces.views`` function (``--json``) or as human lines, and lets
``guard``/``fail`` turn graphmem's errors into one line on stderr and the exit code the error
carries (2 bad input, 1 runtime failure).

The GraphMem comes from the factory in the context object (``CliState.factory``, default
``GraphMem.connect``), so tests run commands over the in-memory adapters by invoking the
app with ``obj=CliState(factory=...)``.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from datetime import time as dt_time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO, NoReturn

import regex
import typer
from pydantic import ValidationError

from graphmem.domain.models import Scope, check_new_project
from graphmem.domain.times import parse_optional_time
from graphmem.errors import REPORTED, GraphMemError, error_line, exit_code
from graphmem.settings.config import Settings, bad_setting

if TYPE_CHECKING:
    from rich.table import Table

    from graphmem.api import GraphMem
    from graphmem.domain.models import MemoryUnit

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
UnitArg = Annotated[str, typer.Argument(help="The unit id.")]


def _subject(value: str | None) -> str | None:
    """A subject is checked as it is read, so bad input is named before any connection is
    tried (with the server down it would otherwise be reported as the server's fault)."""
    if value is not None:
        try:
            Scope.parse(value)
        except (ValueError, GraphMemError) as exc:
            raise typer.BadParameter(error_line(exc)) from None
    return value


def _project(value: str | None) -> str | None:
    """A project that reads as no project is named as it is read, as a subject is."""
    try:
        check_new_project(value)
    except ValueError as exc:
        raise typer.BadParameter(error_line(exc)) from None
    return value


SubjectOpt = Annotated[
    str, typer.Option("--subject", "-s", callback=_subject, help="The subject, TYPE:ID (e.g. user:alice).")
]
ProjectOpt = Annotated[
    str | None, typer.Option("--project", callback=_project, help="Optional project id of the subject.")
]

#: The ``actor`` the CLI's writes record on their decisions and erasure records.
ACTOR = "cli"

#: Opens a GraphMem: ``factory(settings, migrate=..., check_index=...)``.
MemFactory = Callable[..., "GraphMem"]


def _connect(settings: Settings, **options: Any) -> GraphMem:
    from graphmem.api import GraphMem  # imported on first use: the service, not needed for --help

    return GraphMem.connect(settings, **options)


@dataclass
class CliState:
    """The context object: how to open a GraphMem, and the settings it is opened with."""

    factory: MemFactory = _connect
    overrides: dict[str, Any] = field(default_factory=dict)
    settings: Settings | None = None


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"graphmem {version('graphmem')}")
        raise typer.Exit()


# -- connection -------------------------------------------------------------------------------
def connection_options(
    ctx: typer.Context,
    uri: Annotated[str | None, typer.Option("--uri", help="Bolt URI of Neo4j [env NEO4J_URI].")] = None,
    user: Annotated[str | None, typer.Option("--user", help="Neo4j user [env NEO4J_USER].")] = None,
    password: Annotated[
        str | None,
        typer.Option(
            "--password",
            show_default=False,
            help="Neo4j password; other local users can read it in the process list, so "
            "prefer NEO4J_PASSWORD or the local server's password file.",
        ),
    ] = None,
    database: Annotated[str | None, typer.Option("--database", help="Neo4j database [env NEO4J_DATABASE].")] = None,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print graphmem's version and exit."),
    ] = False,
) -> None:
    """graphmem: temporal memory on Neo4j, for operators and scripts."""
    # The driver logs each transient failure it retries (deadlocks between concurrent
    # writers, leader switches) as a warning, and a connection the server dropped as an error
    # ("[#EB02] ... defunct connection"); every failure reaches graphmem as an exception too,
    # said as one line (graphmem.adapters.neo4j.driver.mapped_errors), so keep stderr for that.
    logging.getLogger("neo4j").setLevel(logging.CRITICAL)
    if password is not None:
        typer.echo(
            "warning: --password is visible to other local users (in the process list); "
            "set NEO4J_PASSWORD or use the local server's password file instead",
            err=True,
        )
    state = ctx.ensure_object(CliState)
    # Settings are built lazily (on first use) so a bad GRAPHMEM_* variable does not break
    # commands that never connect, such as `graphmem db status`.
    state.overrides = {"neo4j_uri": uri, "neo4j_user": user, "neo4j_password": password, "neo4j_database": database}


def state(ctx: typer.Context) -> CliState:
    return ctx.find_root().ensure_object(CliState)


#: The root options that set a setting; the others are set by their environment variable.
_OPTION_OF = {
    "neo4j_uri": "--uri",
    "neo4j_user": "--user",
    "neo4j_password": "--password",
    "neo4j_database": "--database",
}


def settings(ctx: typer.Context) -> Settings:
    current = state(ctx)
    if current.settings is None:
        with guard():
            try:
                current.settings = Settings.from_env(**current.overrides)
            except ValidationError as exc:
                given = {f: option for f, option in _OPTION_OF.items() if current.overrides.get(f) is not None}
                raise bad_setting(exc, given) from exc
    return current.settings


@contextmanager
def open_mem(ctx: typer.Context, migrate: bool = True, check_index: bool = True, **parts: Any) -> Iterator[GraphMem]:
    """A GraphMem from the context's factory, closed afterwards; errors become `fail`.
    ``migrate`` applies pending migrations first; ``check_index`` refuses an index built
    with another embedder (both off: nothing touches the database until the first call);
    ``parts`` replace what the settings would build (``policy=...``)."""
    with guard():
        mem = state(ctx).factory(settings(ctx), migrate=migrate, check_index=check_index, **parts)
        try:
            yield mem
        finally:
            mem.close()


# -- errors -----------------------------------------------------------------------------------
def fail(exc: BaseException | str, code: int | None = None) -> NoReturn:
    """Print `error: <msg>` on one line to stderr and exit with the error's code (a plain
    message is bad usage: 2)."""
    message = exc if isinstance(exc, str) else error_line(exc)
    default = 2 if isinstance(exc, str) else exit_code(exc)
    typer.echo(f"error: {shown(message)}", err=True)  # it may quote a file name or memory text
    raise typer.Exit(code if code is not None else default) from None


@contextmanager
def guard() -> Iterator[None]:
    """graphmem errors and bad values become `fail`."""
    try:
        yield
    except REPORTED as exc:
        fail(exc)


# -- serving ----------------------------------------------------------------------------------
def loopback(host: str) -> bool:
    """``host`` is this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` for a server to accept on; a busy port or a bad address
    fails (exit 1, one line) before the server says where it listens."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is no obstacle
        try:
            sock.bind(address)
        except OSError:
            sock.close()
            raise
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", 1)
    return sock


# -- input files ------------------------------------------------------------------------------
def input_stream(file: str) -> tuple[str, BinaryIO]:
    """(name for messages, bytes) of a file, or of stdin for ``-``; a missing or unreadable file
    exits 2. Bytes, so each line is decoded on its own and one bad line stays one line. The
    caller closes a file it got (not stdin)."""
    if file == "-":
        return "<stdin>", sys.stdin.buffer
    path = Path(file)
    if not path.is_file():
        fail(f"{file}: no such file", 2)
    try:
        return file, path.open("rb")
    except OSError as exc:
        fail(f"{file}: cannot be read ({exc.strerror})", 2)


# -- times ------------------------------------------------------------------------------------
def option_time(text: str | None, option: str) -> datetime | None:
    """An ISO 8601 option value (``graphmem.domain.times``); bad text exits 2 naming the option."""
    with guard():
        return parse_optional_time(text, option)


def when(value: datetime | None) -> str:
    """A time for human lines, to the second; ``…`` when open."""
    return value.isoformat(timespec="seconds") if value else "…"


def stamp(value: datetime | None) -> str:
    """A time for human tables: UTC to the second, without the zone (the header says UTC), the
    date alone at midnight (how dates are usually given); blank when open."""
    if value is None:
        return ""
    value = value.astimezone(UTC).replace(tzinfo=None)
    # isoformat, not strftime: the C library writes year 1 as "1", not "0001".
    return value.date().isoformat() if value.time() == dt_time() else value.isoformat(sep=" ", timespec="seconds")


def span(start: datetime | None, end: datetime | None) -> str:
    """An interval for human tables: ``start →`` while open, ``start → end`` once ended."""
    return f"{stamp(start) or 'always'} → {stamp(end)}".rstrip()


def table(*columns: str) -> Table:
    """A rich table for human output on stdout; long text wraps inside its cell."""
    from rich.table import Table

    grid = Table(box=None, show_edge=False, pad_edge=False, header_style="bold")
    for name in columns:
        grid.add_column(name, overflow="fold")
    return grid


#: What a terminal would act on or show as nothing: controls but tabs, format characters (a
#: bidi override reverses the rest of the line) and line separators. Line breaks are among them:
#: in a field of a line or a table cell, what follows one would pass for a line of graphmem's
#: own; ``_UNSHOWN_IN_LINES`` spares them, for a text printed whole.
_UNSHOWN = regex.compile(r"[[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]--[\t]]", regex.V1)
_UNSHOWN_IN_LINES = regex.compile(r"[[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]--[\n\t]]", regex.V1)


def shown(text: str, lines: bool = False) -> str:
    """Memory text for a terminal: each character in ``_UNSHOWN`` as its escape (``\u202e``);
    with ``lines``, a text printed whole (a block value, the assembled context) keeps its line
    breaks."""
    return (_UNSHOWN_IN_LINES if lines else _UNSHOWN).sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def add_row(grid: Table, *cells: str, style: str | None = None) -> None:
    """A row of plain text: memory text such as "[bold]" is shown as written, never read as
    rich markup, and what a terminal would act on is escaped (``shown``)."""
    from rich.text import Text

    grid.add_row(*(Text(shown(cell)) for cell in cells), style=style)


def print_table(grid: Table) -> None:
    """Print on stdout: as wide as the terminal, or 160 columns into a pipe or file (rich's
    80 would wrap every id)."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=160)
    console.print(grid)


# -- output -----------------------------------------------------------------------------------
def emit(obj: Any, json_flag: bool, human: Callable[[], None] | str) -> None:
    """One JSON document on stdout with --json (``obj`` is already plain JSON, from
    ``graphmem.faces.views``); else the human rendering."""
    if json_flag:
        typer.echo(json.dumps(obj))
    elif callable(human):
        human()
    else:
        typer.echo(human)


def echo_unit(unit: MemoryUnit) -> None:
    """A unit for humans: its content, then both time axes as seen now."""
    t = unit.time
    typer.echo(f"unit {shown(unit.id)} ({unit.kind.value}): {shown(unit.content)}")
    typer.echo(
        f"  valid {when(t.valid_at)} .. {when(t.invalid_at)}; known {when(t.created_at)} .. {when(t.expired_at)}"
    )


class Stop:
    """A long write's SIGINT and SIGTERM handler (``stopping``): the first asks it to stop
    after the write committing (``asked``; the caller checks between writes), a second stops
    it at once. Raised inside the driver's socket read, an interrupt can surface as another
    error (BufferError): stopping between writes avoids that."""

    def __init__(self) -> None:
        self.asked = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True
        typer.echo("stopping after the write committing (again to stop at once)", err=True)

    def between_writes(self, done: int, total: int) -> None:
        """Stop here, after a write, when asked and work is left (KeyboardInterrupt)."""
        if self.asked and done < total:
            raise KeyboardInterrupt

    def stopped(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the stop: an interrupt, or whatever the write under way raised
        once one was asked."""
        return isinstance(exc, KeyboardInterrupt) or (self.asked and isinstance(exc, Exception))


@contextmanager
def stopping() -> Iterator[Stop]:
    """Ctrl-C and `kill` handled by a ``Stop`` while the block runs, then as they were."""
    stop = Stop()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stderr_progress():
    """A rich progress bar on stderr (stdout stays clean for --json)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
