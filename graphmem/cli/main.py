"""The `graphmem` command: one sub-command per noun, each a few lines over the library."""

from __future__ import annotations

import typer

from graphmem.cli import admin, blocks, db, index, keys, lifecycle, read, serve, write
from graphmem.cli.common import connection_options
from graphmem.cli.mcp import app as mcp_app

app = typer.Typer(
    pretty_exceptions_show_locals=False,
    no_args_is_help=True,
    help="graphmem: temporal memory on Neo4j, for operators and scripts.",
)
app.callback()(connection_options)

app.add_typer(db.app, name="db")
app.add_typer(blocks.app, name="blocks")
app.add_typer(index.app, name="index")
app.add_typer(lifecycle.episodes, name="episodes")
app.add_typer(lifecycle.review, name="review")
app.add_typer(mcp_app, name="mcp")
app.add_typer(keys.app, name="keys")

app.command()(admin.init)
app.command()(admin.doctor)
app.command()(admin.stats)
app.command()(write.ingest)
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


if __name__ == "__main__":  # pragma: no cover
    app()
