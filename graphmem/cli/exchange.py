"""`graphmem export|import`: a whole subject as JSON Lines, lossless on both time axes."""

from __future__ import annotations

import io
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from graphmem.cli.common import (
    JsonOpt,
    ProjectOpt,
    SubjectOpt,
    emit,
    fail,
    guard,
    input_stream,
    open_mem,
    stderr_progress,
    stopping,
)
from graphmem.cli.write import BulkOpt
from graphmem.faces.episode_lines import json_lines
from graphmem.settings.trust import private_file


def export(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here [default: stdout].")] = None,
) -> None:
    """Every record of a subject as JSON Lines (header first): episodes, units, entities,
    decisions, invalidations, usage, deletions, blocks, review items and traces."""
    # A file appears under its name only once complete (an export cut short leaves none), and
    # is readable by this user only: graphmem.settings.trust.private_file.
    written = 0
    try:
        target = private_file(output) if output else nullcontext(sys.stdout)
        with open_mem(ctx) as mem, stderr_progress() as progress, target as out:
            task = progress.add_task(f"exporting {subject}", total=None)
            for record in mem.export(subject, project):
                out.write(json.dumps(record) + "\n")
                written += 1
                progress.advance(task)
    except OSError as exc:
        fail(f"{output or 'standard output'}: cannot be written ({exc.strerror or exc})", 1)
    typer.echo(f"exported {written - 1} record(s) of {subject}" + (f" to {output}" if output else ""), err=True)


def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="An export (JSON Lines), or - for stdin.")],
    force: Annotated[
        bool, typer.Option("--force", help="Import a subject that was erased from this database.")
    ] = False,
    bulk: Annotated[bool, BulkOpt] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import an export. Every record is checked first (a bad one, named file:line, stores
    nothing); records already stored are skipped, so importing twice changes nothing. A unit
    may carry its "vector", computed by the header's "vector_model": used when that is this
    database's embedder, else embedded again."""
    from graphmem.api import GraphMem  # imported on first use: the service, not needed for --help

    name, stream = input_stream(file)
    try:
        with guard():
            try:
                plan = GraphMem.read_export(json_lines(io.TextIOWrapper(stream, encoding="utf-8"), name))
            except UnicodeDecodeError as exc:  # a ValueError: named here, before guard reports it bare
                fail(f"{name}: not UTF-8 text ({exc.reason})", 2)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    total = sum(len(records) for records in plan.records.values())
    done = 0

    def advanced(n: int) -> None:
        nonlocal done
        done += n
        progress.advance(task, n)
        stop.between_writes(done, total)

    # Ctrl-C or a `kill` stops it after the write committing; a second one at once. Once
    # asked, whatever the write under way raises reads as the interruption.
    with stopping() as stop:
        try:
            with open_mem(ctx) as mem, stderr_progress() as progress:
                task = progress.add_task(f"importing {plan.scope}", total=total)
                result = mem.import_(plan, force=force, progress=advanced, bulk=bulk)
        except BaseException as exc:
            if not stop.stopped(exc):
                raise
            # Each write is one transaction: what committed stays, and a re-run skips it.
            again = "without --bulk " if bulk else ""
            fail(f"interrupted: {file} is imported in part; run the import again {again}to complete it", 130)

    def human() -> None:
        counts = ", ".join(f"{kind} {n}" for kind, n in result["imported"].items() if n) or "nothing new"
        typer.echo(f"imported {result['scope']}: {counts}; {sum(result['skipped'].values())} record(s) already stored")

    emit(result, as_json, human)
