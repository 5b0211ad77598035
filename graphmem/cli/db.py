"""`graphmem db start|stop|status`: the local Neo4j server, a thin layer over LocalNeo4j.

Results go to stdout (one line, or JSON with --json); progress and errors go to stderr, so
`graphmem db status --json | jq` always sees clean JSON.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from pydantic import ValidationError

from graphmem.errors import GraphMemError, InvalidInput
from graphmem.server.local import LocalNeo4j, Status
from graphmem.server.provision import FALLBACK, LATEST
from graphmem.settings.config import DEFAULT_BOLT_PORT, LocalServerSettings, bad_setting

app = typer.Typer(
    help="The local Neo4j Community server (provisioned on first start).",
    no_args_is_help=True,
)

PortOpt = Annotated[
    int,
    typer.Option("--port", envvar="GRAPHMEM_NEO4J_PORT", min=1, max=65535, help="Bolt port on 127.0.0.1."),
]
HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        envvar="GRAPHMEM_HOME",
        file_okay=False,
        help="Where the jars and instances live [default: ~/.cache/graphmem].",
    ),
]
#: `db status`'s exit code for a server that is not running (LSB's "program is not running").
NOT_RUNNING = 3

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the status as JSON.")]
VersionOpt = Annotated[
    str | None,
    typer.Option(
        "--neo4j-version",
        envvar="GRAPHMEM_NEO4J_VERSION",
        help=f"Neo4j to run, e.g. {FALLBACK} (default: {LATEST} when a Java 21+ is installed, else {FALLBACK}).",
        show_default=False,
    ),
]


_OPTION_OF = {"version": "neo4j-version"}  # LocalNeo4j fields whose option has another name


@app.callback()
def _configured(ctx: typer.Context) -> None:
    # Click reads an option's environment variable but not .env, which every other command
    # reads: a port or home set there must name the same server here. A default_map value
    # yields to the environment and the command line, as .env does in Settings.
    try:
        local = LocalServerSettings()
    except ValidationError as exc:
        _fail(bad_setting(exc))
    given = {"port": local.neo4j_port, "home": str(local.home), "version": local.neo4j_version}
    ctx.default_map = {command: given for command in ("start", "stop", "status")}


def _server(port: int, home: Path | None, version: str | None = None, **sizes: str) -> LocalNeo4j:
    fields: dict[str, object] = {"port": port, **sizes}
    if home is not None:
        fields["home"] = home
    if version is not None:
        fields["version"] = version
    try:
        return LocalNeo4j.model_validate(fields)
    except ValidationError as exc:
        # Report pydantic's complaint as the one-line InvalidInput it is (exit code 2).
        first = exc.errors()[0]
        where = _OPTION_OF.get(str(first["loc"][0]), str(first["loc"][0]))
        message = str(first["msg"]).removeprefix("Value error, ")
        _fail(InvalidInput(f"--{where}: {message}"))


def _fail(exc: GraphMemError) -> NoReturn:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(exc.exit_code) from None


#: A port another process holds: most often a server started under another home, which this
#: home's status and stop cannot see (its pid file is elsewhere) though clients reach it.
_PORT_HELD = (
    "another process holds the port (a server of another --home / GRAPHMEM_HOME?): "
    "clients of that port reach it, not this instance"
)


def _print(status: Status, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(status.model_dump()))
    elif status.running:
        password = f"; password in {status.password_file}" if status.password_file else ""
        typer.echo(f"Neo4j {status.version} running at {status.uri} (pid {status.pid}{password})")
    elif status.port_in_use:
        typer.echo(f"Neo4j {status.version} not running ({status.uri}); {_PORT_HELD}")
    else:
        typer.echo(f"Neo4j {status.version} not running ({status.uri})")


@app.command()
def start(
    port: PortOpt = DEFAULT_BOLT_PORT,
    home: HomeOpt = None,
    heap: Annotated[str, typer.Option("--heap", help="JVM heap, e.g. 2g.")] = "2g",
    pagecache: Annotated[str, typer.Option("--pagecache", help="Page cache, e.g. 1g.")] = "1g",
    wait: Annotated[float, typer.Option("--wait", min=1, help="Seconds to wait for Bolt to answer.")] = 120,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Delete this instance's data first (throwaway servers; refused while running)."),
    ] = False,
    version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Start the server (downloading Neo4j from Maven Central on first use) and wait for Bolt.

    The first start writes user neo4j's password to <home>/instances/<port>/password (0600); graphmem reads it there.
    """
    server = _server(port, home, version, heap=heap, pagecache=pagecache)
    try:
        began = time.monotonic()
        was_running = server.status().running
        status = server.start(wait_seconds=wait, progress=lambda note: typer.echo(note, err=True), fresh=fresh)
        if not was_running:
            typer.echo(f"started in {time.monotonic() - began:.1f} s", err=True)
    except GraphMemError as exc:
        _fail(exc)
    _print(status, as_json)
    if port != LocalServerSettings().neo4j_port:  # else the other commands reach it already
        typer.echo(
            f"to point the other graphmem commands at it: export GRAPHMEM_NEO4J_PORT={port}"
            " (or NEO4J_URI, which wins over it)",
            err=True,
        )


@app.command()
def stop(port: PortOpt = DEFAULT_BOLT_PORT, home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """Stop the server (SIGTERM, then SIGKILL after 60 s). Not running is not an error."""
    server = _server(port, home)
    try:
        stopped = server.stop()
    except GraphMemError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps({"stopped": stopped, "uri": server.uri}))
    elif stopped:
        typer.echo(f"stopped Neo4j at {server.uri}")
    elif server.status().port_in_use:
        typer.echo(f"Neo4j was not running ({server.uri}); {_PORT_HELD}")
    else:
        typer.echo(f"Neo4j was not running ({server.uri})")


@app.command()
def status(
    port: PortOpt = DEFAULT_BOLT_PORT, home: HomeOpt = None, version: VersionOpt = None, as_json: JsonOpt = False
) -> None:
    """Whether the server runs: {"running", "uri", "version", "pid", "password_file", "port_in_use"} with --json.

    Exits 0 when it runs and 3 when it does not, as service managers' status commands do."""
    server = _server(port, home, version)
    try:
        current = server.status()
    except GraphMemError as exc:
        _fail(exc)
    _print(current, as_json)
    if not current.running:
        raise typer.Exit(NOT_RUNNING)
