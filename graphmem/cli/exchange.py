"""`graphmem export|import`: a whole subject as JSON Lines, lossless on both time axes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Annotated, Optional, TextIO

import typer

from graphmem.cli.common import JsonOpt, ProjectOpt, SubjectOpt, emit, fail, guard, input_stream, open_mem, stderr_progress
from graphmem.pipelines import exchange


def export(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here [default: stdout].")] = None,
) -> None:
    """Every record of a subject as JSON Lines (header first): episodes, units, entities,
    decisions, invalidations, usage, deletions, blocks, review items and traces."""
    # A file appears under its name only once complete: an export cut short leaves none.
    partial = output.with_name(output.name + ".partial") if output else None
    written = 0
    try:
        with open_mem(ctx) as mem, stderr_progress() as progress:
            task = progress.add_task(f"exporting {subject}", total=None)
            out: TextIO = partial.open("w", encoding="utf-8") if partial else sys.stdout
            try:
                for record in mem.export(subject, project):
                    out.write(json.dumps(record) + "\n")
                    written += 1
                    progress.advance(task)
            finally:
                if partial:
                    out.close()
        if partial:
            partial.replace(output)
    finally:
        if partial and partial.exists():
            partial.unlink()
    typer.echo(f"exported {written - 1} record(s) of {subject}" + (f" to {output}" if output else ""), err=True)


def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="An export (JSON Lines), or - for stdin.")],
    force: Annotated[bool, typer.Option("--force", help="Import a subject that was erased from this database.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import an export. Every record is checked first (a bad one, named file:line, stores
    nothing); records already stored are skipped, so importing twice changes nothing."""
    name, stream = input_stream(file)
    try:
        with guard():
            plan = exchange.read_lines(io.TextIOWrapper(stream, encoding="utf-8"), name)
    except UnicodeDecodeError as exc:
        fail(f"{name}: not UTF-8 text ({exc.reason})", 2)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    with open_mem(ctx) as mem:
        result = mem.import_(plan, force=force)

    def human() -> None:
        counts = ", ".join(f"{kind} {n}" for kind, n in result["imported"].items() if n) or "nothing new"
        typer.echo(f"imported {result['scope']}: {counts}; {sum(result['skipped'].values())} record(s) already stored")
    emit(result, as_json, human)
