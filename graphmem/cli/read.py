"""`graphmem recall|assemble|history`: reading memory at a point on both time axes."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from graphmem import views
from graphmem.cli.common import JsonOpt, ProjectOpt, SubjectOpt, emit, fail, open_mem, option_time, when
from graphmem.models import MemoryKind

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="World time T (ISO 8601) [default: now].")]
KnownAtOpt = Annotated[Optional[str], typer.Option("--known-at", help="System time S (ISO 8601) [default: now].")]
SharedOpt = Annotated[bool, typer.Option("--include-shared", help="Also read the shared:global scope.")]


class Mode(str, Enum):
    hybrid = "hybrid"
    semantic = "semantic"
    lexical = "lexical"


def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to recall.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    k: Annotated[int, typer.Option("--k", help="How many hits (1..1000).")] = 10,
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    hops: Annotated[int, typer.Option("--hops", help="Graph hops from the top hits (0..3).")] = 0,
    kind: Annotated[Optional[list[MemoryKind]], typer.Option("--kind", help="Only this kind (repeatable).")] = None,
    include_shared: SharedOpt = False,
    mode: Annotated[Mode, typer.Option("--mode", help="hybrid|semantic|lexical.")] = Mode.hybrid,
    as_json: JsonOpt = False,
) -> None:
    """The k best units visible at (as-of, known-at), best first."""
    valid, known = option_time(as_of, "--as-of"), option_time(known_at, "--known-at")
    with open_mem(ctx) as mem:
        hits = mem.recall(query, subject=subject, project=project, k=k, as_of=valid, known_at=known, hops=hops,
                          kinds=tuple(kind or ()), include_shared=include_shared, mode=mode.value)

    def human() -> None:
        for hit in hits:
            t = hit.unit.time
            typer.echo(f"{hit.score:.4f}  [{when(t.valid_at)} .. {when(t.invalid_at)}]  {hit.unit.content}  ({hit.unit.id})")
            if hit.path:
                typer.echo(f"        via {' -> '.join(hit.path)}")
        if not hits:
            typer.echo("no hits")
    emit(views.recall(hits), as_json, human)


def assemble(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the context is for.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    budget: Annotated[Optional[int], typer.Option("--budget", min=1, help="Token budget of the recalled section.")] = None,
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    hops: Annotated[int, typer.Option("--hops", help="Graph hops (0..3).")] = 0,
    include_shared: SharedOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Resident blocks plus recalled units within budget: the context text."""
    valid, known = option_time(as_of, "--as-of"), option_time(known_at, "--known-at")
    with open_mem(ctx) as mem:
        result = mem.assemble(query, subject=subject, project=project, budget=budget, as_of=valid, known_at=known,
                              include_shared=include_shared, hops=hops)
    emit(views.assembly(result), as_json, result.text)


def history(
    ctx: typer.Context,
    subject: SubjectOpt,
    unit: Annotated[Optional[str], typer.Option("--unit", help="A unit id: it and what it superseded.")] = None,
    entity: Annotated[Optional[str], typer.Option("--entity", help="An entity name: its facts over time.")] = None,
    project: ProjectOpt = None,
    known_at: KnownAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The bi-temporal timeline of an entity, or of a unit and what it superseded."""
    if (unit is None) == (entity is None):
        fail("give exactly one of --unit ID or --entity NAME", 2)
    known = option_time(known_at, "--known-at")
    with open_mem(ctx) as mem:
        entries = mem.history(subject=subject, entity=entity, unit_id=unit, project=project, known_at=known)

    def human() -> None:
        for entry in entries:
            u, t = entry["unit"], entry["unit"].time
            typer.echo(f"valid {when(t.valid_at)} .. {when(t.invalid_at)}  "
                       f"known {when(t.created_at)} .. {when(t.expired_at)}  {u.content}  ({u.id})")
            for d in entry["decisions"]:
                typer.echo(f"    {d.op.value}: {d.reason}")
        if not entries:
            typer.echo("no history")
    emit({"entries": [views.history_entry(e) for e in entries]}, as_json, human)
