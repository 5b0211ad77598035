"""`graphmem mcp serve`: graphmem as the memory of an agent host, over the Model Context Protocol.

Needs the optional extra (``pip install 'graphmem[mcp]'``); without it the command prints one
line saying so. Also runnable without the main CLI: ``python -m graphmem.cli.mcp mcp serve ...``.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from graphmem.cli.common import ProjectOpt, connection_options, fail, guard, open_mem

app = typer.Typer(help="Serve graphmem to agent hosts over the Model Context Protocol (MCP).", no_args_is_help=True)

MISSING_EXTRA = "the MCP server needs the mcp extra: pip install 'graphmem[mcp]'"
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


@app.command()
def serve(
    ctx: typer.Context,
    subject: Annotated[str, typer.Option(
        "--subject", "-s", envvar="GRAPHMEM_MCP_SUBJECT", show_default=False,
        help="The default subject of every call, TYPE:ID (e.g. user:alice).")],
    transport: Annotated[Transport, typer.Option("--transport", help="stdio (for a host that spawns it) or http (streamable HTTP at /mcp).")] = Transport.stdio,
    host: Annotated[str, typer.Option("--host", help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP port.")] = 8765,
    project: ProjectOpt = None,
    allow_subject: Annotated[Optional[list[str]], typer.Option(
        "--allow-subject", help="Another subject a call may name (repeatable).")] = None,
    allow_any_subject: Annotated[bool, typer.Option(
        "--allow-any-subject", help="Let a call name any subject (default: only the configured ones).")] = False,
) -> None:
    """Serve the memory tools (remember, recall, assemble, history, explain, blocks_*, forget)."""
    try:
        from graphmem.mcp_server import McpConfig, build_server, run_server
    except ImportError as exc:
        if (getattr(exc, "name", None) or "").split(".")[0] != "mcp":
            raise
        fail(MISSING_EXTRA, 1)
    with guard():
        config = McpConfig(subject=subject, project=project, allow_subjects=tuple(allow_subject or ()),
                           allow_any_subject=allow_any_subject)
    if transport is Transport.http and host not in LOOPBACK:
        typer.echo(f"warning: serving on {host}: the MCP endpoint has no authentication", err=True)
    with open_mem(ctx) as mem:
        server = build_server(lambda: mem, config)
        if transport is Transport.http:
            typer.echo(f"graphmem MCP server on http://{host}:{port}/mcp (subject {subject})", err=True)
        run_server(server, transport.value, host=host, port=port)


def main() -> None:  # pragma: no cover - `python -m graphmem.cli.mcp mcp serve ...`
    root = typer.Typer(pretty_exceptions_show_locals=False, no_args_is_help=True)
    root.callback()(connection_options)
    root.add_typer(app, name="mcp")
    root()


if __name__ == "__main__":  # pragma: no cover
    main()
