"""`graphmem index status|rebuild`: the derived search index (vectors and fulltext labels)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from graphmem.cli.common import JsonOpt, ProjectOpt, emit, guard, open_conn, settings, stderr_progress

app = typer.Typer(help="The derived search index: status and rebuild.", no_args_is_help=True)


def _index(ctx: typer.Context, conn):
    from graphmem.adapters.neo4j_index import Neo4jIndex
    from graphmem.embed import make_embedder

    return Neo4jIndex(conn, make_embedder(settings(ctx)))


@app.command()
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The index model, counts of indexed units and entities, and index states."""
    with open_conn(ctx) as conn:
        current = _index(ctx, conn).status()

    def human() -> None:
        typer.echo(f"model: {current['model']} ({current['dimension']} dims); "
                   f"embedder: {current['embedder']['model']} ({current['embedder']['dimension']} dims)")
        for key in ("units", "searchable_units", "entities", "searchable_entities"):
            typer.echo(f"{key}: {current.get(key)}")
        for row in current.get("indexes", []):
            typer.echo(f"index {row['name']} ({row['type']}): {row['state']} {row.get('populationPercent')}%")
    emit(current, as_json, human)


@app.command()
def rebuild(
    ctx: typer.Context,
    subject: Annotated[Optional[str], typer.Option("--subject", "-s", help="Only this subject (TYPE:ID).")] = None,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-embed every unit and entity with the configured embedder (all, or one subject)."""
    from graphmem.api import as_scope

    scope = None
    if subject is not None:
        with guard():
            scope = as_scope(subject, project)
    # No ensure(): it refuses a model mismatch, which is exactly what a rebuild repairs.
    with open_conn(ctx) as conn:
        index = _index(ctx, conn)
        total = None if scope else index.status()["units"]
        with stderr_progress() as progress:
            task = progress.add_task("re-embedding units", total=total)
            done = index.rebuild(scope, progress=lambda n: progress.advance(task, n))
    result = {"units": done, "scope": str(scope) if scope else None,
              "model": index.embedder.name, "dimension": index.embedder.dimension}
    emit(result, as_json, f"re-embedded {done} unit(s) with {result['model']} ({result['dimension']} dims)")
