"""`graphmem export|import`: a whole subject as JSON Lines, lossless on both time axes."""

from __future__ import annotations

import io
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

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
from graphmem.faces.episode_lines import ExportFile, json_lines
from graphmem.settings.trust import private_file

if TYPE_CHECKING:
    from graphmem.pipelines.export_check import Plan


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


def read_export(name: str, stream: BinaryIO) -> Plan:
    from graphmem.api import GraphMem  # imported on first use: the service, not needed for --help

    try:
        return GraphMem.read_export(json_lines(io.TextIOWrapper(stream, encoding="utf-8"), name))
    except UnicodeDecodeError as exc:  # a ValueError: named here, before guard reports it bare
        fail(f"{name}: not UTF-8 text ({exc.reason})", 2)


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
    database's embedder, else embedded again. With --bulk a file is read twice (checked, then
    loaded in segments), so one of any size fits in memory."""

    name, stream = input_stream(file)
    # A bulk load of a file reads it twice (checked, then loaded a segment at a time), so a
    # file of any size fits in memory; stdin is read once, whole.
    source: Plan | ExportFile
    try:
        if bulk and stream is not sys.stdin.buffer:
            source, total = ExportFile(stream, name), None
        else:
            with guard():
                source = read_export(name, stream)
            total = sum(len(records) for records in source.records.values())
        done = checked = 0
        writing = False  # told before the first write (``import_plan``'s skipped count)

        def checking(n: int) -> None:
            nonlocal checked
            checked += n
            progress.advance(check, n)
            if stop.asked:  # nothing is written while a file is checked
                raise KeyboardInterrupt

        def advanced(n: int) -> None:
            nonlocal done, writing
            done, writing = done + n, True
            progress.update(task, advance=n, total=total or checked)
            stop.between_writes(done, total or checked)

        # Ctrl-C or a `kill` stops it after the write committing; a second one at once. Once
        # asked, whatever the write under way raises reads as the interruption.
        with stopping() as stop:
            try:
                with open_mem(ctx) as mem, stderr_progress() as progress:
                    check = progress.add_task(f"checking {name}", total=None, visible=total is None)
                    task = progress.add_task(f"importing {name}", total=total)
                    result = mem.import_(source, force=force, progress=advanced, bulk=bulk, checked=checking)
            except UnicodeDecodeError as exc:  # a ValueError: named here, before guard reports it bare
                fail(f"{name}: not UTF-8 text ({exc.reason})", 2)
            except BaseException as exc:
                if not stop.stopped(exc):
                    raise
                if not writing:
                    fail(f"interrupted: nothing of {file} is imported", 130)
                # Each write is one transaction: what committed stays, and a re-run skips it.
                again = "without --bulk " if bulk else ""
                fail(f"interrupted: {file} is imported in part; run the import again {again}to complete it", 130)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()

    def human() -> None:
        counts = ", ".join(f"{kind} {n}" for kind, n in result["imported"].items() if n) or "nothing new"
        typer.echo(f"imported {result['scope']}: {counts}; {sum(result['skipped'].values())} record(s) already stored")

    emit(result, as_json, human)
