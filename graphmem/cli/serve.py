"""`graphmem serve`: the HTTP API, its OpenAPI description and the memory browser page.

Needs the optional extra (``pip install 'graphmem[server]'``). By default one process, one
GraphMem (one driver, the embedder loaded once), uvicorn serving ``graphmem.http.create_app``;
with ``--workers N``, N processes on one socket (``graphmem.http.workers``). Access lines and
errors go to stderr.
"""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import fail, guard, listen, loopback, open_mem, settings

MISSING_EXTRA = (
    "graphmem serve needs the server extra: pip install 'graphmem[server]' "
    "(in a checkout: .venv/bin/pip install -e '.[server]')"
)


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Bind address (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP port.")] = 8080,
    insecure_no_auth: Annotated[
        bool, typer.Option("--insecure-no-auth", help="Serve without API keys (refused unless the host is loopback).")
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="Server processes on the port, each with its own connection and embedder (about a core each).",
        ),
    ] = 1,
) -> None:
    """Serve the HTTP API (/v1, OpenAPI at /docs), /healthz, /readyz and the memory browser at /."""
    if insecure_no_auth and not loopback(host):
        fail(
            f"--insecure-no-auth is refused on {host}: only a loopback host (127.0.0.1, ::1, localhost) "
            "may serve without API keys",
            2,
        )
    try:
        import uvicorn

        from graphmem.http import HttpConfig, create_app
        from graphmem.http.workers import log_to_stderr, serve_workers
    except ImportError as exc:
        if (getattr(exc, "name", None) or "").split(".")[0] not in (
            "fastapi",
            "fastapi_offline",
            "starlette",
            "uvicorn",
        ):
            raise
        fail(MISSING_EXTRA, 1)
    with guard():
        config = HttpConfig.from_settings(settings(ctx), auth=not insecure_no_auth, loopback=loopback(host))
    with open_mem(ctx) as mem:
        known = mem.keys() if config.auth else []
        if config.auth and not any(k.revoked_at is None for k in known):
            none = f"no live API key ({len(known)} revoked)" if known else "no API key defined"
            fail(
                f"{none}: create one with `graphmem keys create --subject TYPE:ID` "
                "(or serve a loopback host with --insecure-no-auth)",
                1,
            )
        sock = listen(host, port)
        log_to_stderr()
        shown = f"[{host}]" if ":" in host else host
        typer.echo(
            f"graphmem API on http://{shown}:{port}/ (OpenAPI at /docs)"
            + (f" in {workers} processes" if workers > 1 else "")
            + ("; WITHOUT AUTHENTICATION" if insecure_no_auth else ""),
            err=True,
        )
        if workers == 1:
            app = create_app(lambda: mem, config)
            server = uvicorn.Server(
                uvicorn.Config(app, log_config=None, access_log=False, timeout_graceful_shutdown=10)
            )
            server.run(sockets=[sock])
            return
    # Each worker opens its own connection: this one only checked the keys and the migrations.
    serve_workers(settings(ctx), config, sock, workers)
