"""Shared plumbing for the CLI: connection options, errors, times, output.

Every command is a few lines over the library: it opens a GraphMem with ``open_mem(ctx)`` (or
a bare connection with ``open_conn(ctx)``), turns the result into a JSON document or human
lines with ``emit``, and lets ``guard``/``fail`` turn graphmem's errors into one line on
stderr and the exit code the error carries (2 bad input, 1 runtime failure).
"""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from datetime import datetime, timezone
from enum import Enum
from typing import Annotated, Any, Callable, Iterator, NoReturn, Optional

import typer
from pydantic import ValidationError

from graphmem.config import Settings
from graphmem.errors import GraphMemError

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
SubjectOpt = Annotated[str, typer.Option("--subject", "-s", help="The subject, TYPE:ID (e.g. user:alice).")]
ProjectOpt = Annotated[Optional[str], typer.Option("--project", help="Optional project id of the subject.")]


# -- connection -------------------------------------------------------------------------------
def connection_options(
    ctx: typer.Context,
    uri: Annotated[Optional[str], typer.Option("--uri", envvar="NEO4J_URI", help="Bolt URI of Neo4j.")] = None,
    user: Annotated[Optional[str], typer.Option("--user", envvar="NEO4J_USER", help="Neo4j user.")] = None,
    password: Annotated[
        Optional[str], typer.Option("--password", envvar="NEO4J_PASSWORD", help="Neo4j password.", show_default=False)
    ] = None,
    database: Annotated[Optional[str], typer.Option("--database", envvar="NEO4J_DATABASE", help="Neo4j database.")] = None,
) -> None:
    """graphmem: temporal memory on Neo4j, for operators and scripts."""
    # The driver logs each transient failure it retries (deadlocks between concurrent
    # writers, leader switches) as a warning; they are handled, so keep stderr for real errors.
    logging.getLogger("neo4j").setLevel(logging.ERROR)
    # Settings are built lazily (on first use) so a bad GRAPHMEM_* variable does not break
    # commands that never connect, such as `graphmem db status`.
    ctx.obj = {"overrides": {"neo4j_uri": uri, "neo4j_user": user, "neo4j_password": password,
                             "neo4j_database": database}}


def settings(ctx: typer.Context) -> Settings:
    obj = ctx.find_root().obj if ctx.find_root().obj is not None else ctx.obj
    obj = obj if isinstance(obj, dict) else {}
    if "settings" not in obj:
        with guard():
            obj["settings"] = Settings.from_env(**obj.get("overrides", {}))
    return obj["settings"]


@contextmanager
def open_mem(ctx: typer.Context) -> Iterator[Any]:
    """A connected GraphMem (migrations applied, index checked); errors become `fail`."""
    from graphmem.api import GraphMem

    with guard():
        mem = GraphMem.connect(settings(ctx))
        try:
            yield mem
        finally:
            mem.close()


@contextmanager
def open_conn(ctx: typer.Context, migrate: bool = True) -> Iterator[Any]:
    """A bare Neo4jConnection (for init, doctor, index): no index model check."""
    from graphmem.adapters.neo4j_driver import Neo4jConnection

    with guard():
        conn = Neo4jConnection(settings(ctx))
        try:
            if migrate:
                conn.migrate()
            yield conn
        finally:
            conn.close()


# -- errors -----------------------------------------------------------------------------------
def validation_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or exc.title
    msg = first["msg"]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {msg}{more}"


def error_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        return validation_message(exc)
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def fail(exc: BaseException | str, code: int | None = None) -> NoReturn:
    """Print `error: <msg>` on one line to stderr and exit with the error's code."""
    if isinstance(exc, str):
        message, default = exc, 2
    else:
        message = error_line(exc)
        default = exc.exit_code if isinstance(exc, GraphMemError) else (2 if isinstance(exc, ValueError) else 1)
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code if code is not None else default) from None


@contextmanager
def guard() -> Iterator[None]:
    """Map graphmem errors, validation errors and ValueError to `fail`."""
    try:
        yield
    except (GraphMemError, ValidationError, ValueError) as exc:
        fail(exc)


# -- times ------------------------------------------------------------------------------------
def to_datetime(text: str) -> datetime:
    """ISO 8601; a date alone is midnight UTC; a time without a zone is UTC. ValueError if bad."""
    raw = text.strip()
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time (e.g. 2021-03-01 or 2021-03-01T12:00:00+02:00)") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def parse_time(text: str | None, option: str = "time") -> datetime | None:
    """`to_datetime` for a CLI option: bad text exits 2 with one line naming the option."""
    if text is None:
        return None
    try:
        return to_datetime(text)
    except ValueError as exc:
        fail(f"{option}: {exc}", 2)


# -- output -----------------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """Models, enums and datetimes to plain JSON values, recursively."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k.value if isinstance(k, Enum) else k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def iso(value: datetime | None) -> str:
    return value.isoformat() if value else "…"


def emit(obj: Any, json_flag: bool, human: Callable[[], None] | str | None = None) -> None:
    """One JSON document on stdout with --json; else the human rendering."""
    if json_flag:
        typer.echo(json.dumps(jsonable(obj), default=str))
    elif callable(human):
        human()
    elif human is not None:
        typer.echo(human)
    else:
        typer.echo(json.dumps(jsonable(obj), default=str, indent=2))


def stderr_progress():
    """A rich progress bar on stderr (stdout stays clean for --json)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    )
