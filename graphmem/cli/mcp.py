"""`graphmem mcp serve`: graphmem as the memory of an agent host, over the Model Context Protocol.

Needs the optional extra (``pip install 'graphmem[mcp]'``); without it the command prints one
line saying so. Also runnable without the main CLI: ``python -m graphmem.cli.mcp mcp serve ...``.

Over HTTP the endpoint needs a bearer token: ``GRAPHMEM_MCP_TOKEN``, else ``--token-file``, else
one generated once into ``<GRAPHMEM_HOME>/mcp-token`` (mode 0600); API keys are accepted too.
"""

from __future__ import annotations

import os
import secrets
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from graphmem.cli.common import ProjectOpt, connection_options, fail, guard, listen, loopback, open_mem, settings
from graphmem.errors import ConfigurationError
from graphmem.settings.trust import HOME_FIX, private_dir, trusted

app = typer.Typer(help="Serve graphmem to agent hosts over the Model Context Protocol (MCP).", no_args_is_help=True)

MISSING_EXTRA = (
    "the MCP server needs the mcp extra: pip install 'graphmem[mcp]' (in a checkout: .venv/bin/pip install -e '.[mcp]')"
)
TOKEN_FILE = "mcp-token"


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def bearer_token(ctx: typer.Context, token_file: Path | None) -> str:
    """The token HTTP clients must send: ``GRAPHMEM_MCP_TOKEN``, else the file given, else the
    one stored under GRAPHMEM_HOME (generated there, mode 0600, on first use); a file another
    user could have written or may read is refused (graphmem.settings.trust). Says which on stderr,
    never the token itself."""
    configured = settings(ctx).mcp_token.get_secret_value()
    if token_file is None and configured:
        typer.echo("bearer token: GRAPHMEM_MCP_TOKEN", err=True)
        return configured
    path = token_file or settings(ctx).home / TOKEN_FILE
    try:
        if token_file is None and not path.exists():
            private_dir(path.parent)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(secrets.token_urlsafe(32) + "\n")
            typer.echo(f"generated a bearer token in {path} (mode 0600)", err=True)
        # A token another local user can read, or wrote (a home in a shared folder), lets them in.
        trusted(path, secret=True, instead="use a token file only you can change" if token_file else HOME_FIX)
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    except ConfigurationError as exc:
        fail(f"--token-file: {exc}", 2)
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--token-file {path}: {getattr(exc, 'strerror', None) or exc}", 2)
    if not token:
        fail(f"--token-file {path}: the file is empty", 2)
    typer.echo(f"bearer token: in {path}", err=True)
    return token


@app.command()
def serve(
    ctx: typer.Context,
    subject: Annotated[
        str,
        typer.Option(
            "--subject",
            "-s",
            envvar="GRAPHMEM_MCP_SUBJECT",
            show_default=False,
            help="The default subject of every call, TYPE:ID (e.g. user:alice).",
        ),
    ],
    transport: Annotated[
        Transport,
        typer.Option("--transport", help="stdio (for a host that spawns it) or http (streamable HTTP at /mcp)."),
    ] = Transport.stdio,
    host: Annotated[str, typer.Option("--host", help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP port.")] = 8765,
    project: ProjectOpt = None,
    allow_subject: Annotated[
        list[str] | None, typer.Option("--allow-subject", help="Another subject a call may name (repeatable).")
    ] = None,
    allow_any_subject: Annotated[
        bool,
        typer.Option("--allow-any-subject", help="Let a call name any subject (default: only the configured ones)."),
    ] = False,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            dir_okay=False,
            help="HTTP: a file holding the bearer token [default: GRAPHMEM_MCP_TOKEN, "
            "else <GRAPHMEM_HOME>/mcp-token, generated on first use].",
        ),
    ] = None,
    insecure_no_auth: Annotated[
        bool, typer.Option("--insecure-no-auth", help="HTTP without a token (refused unless the host is loopback).")
    ] = False,
) -> None:
    """Serve the memory tools (remember, recall, assemble, history, explain, blocks_*, forget, episodes_*,
    decisions)."""
    try:
        from graphmem.mcp.server import McpConfig, build_server, run_server
    except ImportError as exc:
        if (getattr(exc, "name", None) or "").split(".")[0] != "mcp":
            raise
        fail(MISSING_EXTRA, 1)
    with guard():
        config = McpConfig(
            subject=subject,
            project=project,
            allow_subjects=tuple(allow_subject or ()),
            allow_any_subject=allow_any_subject,
        )
    http = transport is Transport.http
    if http and insecure_no_auth and not loopback(host):
        fail(
            f"--insecure-no-auth is refused on {host}: only a loopback host (127.0.0.1, ::1, localhost) "
            "may serve without a token",
            2,
        )
    with open_mem(ctx) as mem:
        server = build_server(lambda: mem, config)
        if not http:
            run_server(server, "stdio")
            return
        sock = listen(host, port)
        token = None if insecure_no_auth else bearer_token(ctx, token_file)
        shown = f"[{host}]" if ":" in host else host
        typer.echo(
            f"graphmem MCP server on http://{shown}:{port}/mcp (subject {subject})"
            + ("; WITHOUT AUTHENTICATION" if insecure_no_auth else ""),
            err=True,
        )
        run_server(server, "http", host=host, port=port, sock=sock, token=token, authenticate=mem.authenticate)


def main() -> None:  # pragma: no cover - `python -m graphmem.cli.mcp mcp serve ...`
    root = typer.Typer(pretty_exceptions_show_locals=False, no_args_is_help=True, rich_markup_mode=None)
    root.callback()(connection_options)
    root.add_typer(app, name="mcp")
    root()


if __name__ == "__main__":  # pragma: no cover
    main()
