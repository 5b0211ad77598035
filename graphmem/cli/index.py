"""`graphmem index status|rebuild`: the derived search index (vectors and fulltext labels)."""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import JsonOpt, ProjectOpt, emit, open_mem, stderr_progress

app = typer.Typer(help="The derived search index: status and rebuild.", no_args_is_help=True)


@app.command()
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The index model, counts of indexed units and entities, and index states."""
    # No index check: showing a model mismatch is part of the job.
    with open_mem(ctx, check_index=False) as mem:
        current = mem.index_status()

    def human() -> None:
        typer.echo(
            f"model: {current['model']} ({current['dimension']} dims); "
            f"embedder: {current['embedder']['model']} ({current['embedder']['dimension']} dims)"
        )
        if current.get("building"):
            typer.echo(f"rebuilding to {current['building']}: run `graphmem index rebuild` to finish")
        for key in ("units", "searchable_units", "entries", "entities"):
            typer.echo(f"{key}: {current.get(key)}")
        for row in current.get("indexes", []):
            typer.echo(f"index {row['name']} ({row['type']}): {row['state']} {row.get('populationPercent')}%")

    emit(current, as_json, human)


@app.command()
def rebuild(
    ctx: typer.Context,
    subject: Annotated[str | None, typer.Option("--subject", "-s", help="Only this subject (TYPE:ID).")] = None,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-embed every unit and entity with the configured embedder (all, or one subject)."""
    # No index check: it refuses a model mismatch, which is exactly what a rebuild repairs.
    with open_mem(ctx, check_index=False) as mem, stderr_progress() as progress:
        total = None if subject else mem.stats()["units"]
        task = progress.add_task("re-embedding units", total=total)
        result = mem.rebuild_index(subject, project, progress=lambda n: progress.advance(task, n))
    result = {**result, "scope": subject, "project": project}
    emit(result, as_json, f"re-embedded {result['units']} unit(s) with {result['model']} ({result['dimension']} dims)")
