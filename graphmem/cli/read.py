"""`graphmem recall|assemble|history|subjects|units show`: reading memory at a point on both
time axes, and what it holds."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from graphmem.cli.common import (
    JsonOpt,
    ProjectOpt,
    SubjectOpt,
    UnitArg,
    add_row,
    echo_unit,
    emit,
    fail,
    open_mem,
    option_time,
    print_table,
    shown,
    span,
    stamp,
    table,
    waiting,
    when,
)
from graphmem.domain.limits import MAX_HOPS, MAX_K
from graphmem.domain.models import MemoryKind
from graphmem.faces import views

units = typer.Typer(help="Memory units: one as stored, with its usage.", no_args_is_help=True)

AsOfOpt = Annotated[str | None, typer.Option("--as-of", help="World time T (ISO 8601) [default: now].")]
KnownAtOpt = Annotated[str | None, typer.Option("--known-at", help="System time S (ISO 8601) [default: now].")]
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
    k: Annotated[int, typer.Option("--k", help=f"How many hits (1..{MAX_K}).")] = 10,
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    hops: Annotated[int, typer.Option("--hops", help=f"Graph hops from the top hits (0..{MAX_HOPS}).")] = 0,
    kind: Annotated[list[MemoryKind] | None, typer.Option("--kind", help="Only this kind (repeatable).")] = None,
    include_shared: SharedOpt = False,
    mode: Annotated[Mode, typer.Option("--mode", help="hybrid|semantic|lexical.")] = Mode.hybrid,
    rerank: Annotated[
        bool | None,
        typer.Option(
            "--rerank/--no-rerank",
            help="Reorder the best candidates with the cross-encoder [default: GRAPHMEM_RERANK, off].",
        ),
    ] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            min=0,
            max=100,
            help="Drop hits whose confidence is below this % (0..100) [default: keep every hit].",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The k best units visible at (as-of, known-at), best first.

    Each hit shows its confidence: how likely it is what the question asks about (of the hits
    shown at about 30%, about 30 in 100 are; docs/recall.md). When no hit is relevant, "nothing
    relevant found" heads the list, dimmed. --json gives "relevant" and, per hit, "confidence"
    (0..1), the fused "score" and a direct hit's "similarity" with the question. Nothing is
    filtered unless --min-confidence is given."""
    valid, known = option_time(as_of, "--as-of"), option_time(known_at, "--known-at")
    with open_mem(ctx) as mem, waiting("recalling (the first question loads the model)"):
        hits = mem.recall(
            query,
            subject=subject,
            project=project,
            k=k,
            as_of=valid,
            known_at=known,
            hops=hops,
            kinds=tuple(kind or ()),
            include_shared=include_shared,
            mode=mode.value,
            rerank=rerank,
        )
        empty = not hits and not mem.episodes(subject, project, limit=1)
    kept = views.confident(hits, min_confidence)
    doc = views.recall(hits, min_confidence)

    def human() -> None:
        if not kept:
            typer.echo(f"no hits: {subject} holds no episodes (check the subject)" if empty else "no hits")
        else:
            if not hits.relevant:
                typer.echo("nothing relevant found; the closest hits:")
            grid = table("confidence", "fact", "kind", "valid (UTC)", "via", "id")
            for h in kept:
                via = "direct" if not h.hop else f"hop {h.hop}: " + " → ".join(h.path)
                add_row(
                    grid,
                    f"{100 * h.confidence:.0f}%",
                    h.unit.content,
                    h.unit.kind.value,
                    span(h.unit.time.valid_at, h.unit.time.invalid_at),
                    via,
                    h.unit.id,
                    style=None if hits.relevant else "dim",
                )
            print_table(grid)
        if hits.incomplete:
            typer.echo(
                f"incomplete: {hits.incomplete} episode(s) stored without their decisions are not in "
                "these hits (run `graphmem complete`)"
            )

    emit(doc, as_json, human)


def assemble(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the context is for.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    budget: Annotated[
        int | None, typer.Option("--budget", min=0, help="Token budget of the recalled section (0: blocks only).")
    ] = None,
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    hops: Annotated[int, typer.Option("--hops", help=f"Graph hops (0..{MAX_HOPS}).")] = 0,
    include_shared: SharedOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Resident blocks plus recalled units within budget: the context text."""
    valid, known = option_time(as_of, "--as-of"), option_time(known_at, "--known-at")
    with open_mem(ctx) as mem:
        result = mem.assemble(
            query,
            subject=subject,
            project=project,
            budget=budget,
            as_of=valid,
            known_at=known,
            include_shared=include_shared,
            hops=hops,
        )
    emit(views.assembly(result), as_json, shown(result.text, lines=True))


def history(
    ctx: typer.Context,
    subject: SubjectOpt,
    unit: Annotated[str | None, typer.Option("--unit", help="A unit id: it and what it superseded.")] = None,
    entity: Annotated[str | None, typer.Option("--entity", help="An entity name: its facts over time.")] = None,
    project: ProjectOpt = None,
    known_at: KnownAtOpt = None,
    include_expired: Annotated[
        bool,
        typer.Option(
            "--include-expired", help="With --entity: also the facts no longer believed (retracted or redrawn)."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """The bi-temporal timeline of an entity, or of a unit and what it superseded."""
    if (unit is None) == (entity is None):
        fail("give exactly one of --unit ID or --entity NAME", 2)
    known = option_time(known_at, "--known-at")
    with open_mem(ctx) as mem:
        entries = mem.history(
            subject=subject,
            entity=entity,
            unit_id=unit,
            project=project,
            known_at=known,
            include_expired=include_expired,
        )

    if not entries and entity is not None:
        fail(
            f"nothing found: no facts name {entity!r} in {subject} (known at {when(known)})"
            if known
            else f"nothing found: no facts name {entity!r} in {subject}",
            2,
        )  # as NotFound

    def human() -> None:
        grid = table("valid (UTC)", "believed (UTC)", "fact, then the decisions that shaped it", "id")
        for entry in entries:
            u, t, until = entry["unit"], entry["unit"].time, entry["believed_until"]
            if until is not None and until == t.created_at:
                # Replaced by a later fact of the same write: never believed on its own.
                believed = f"{stamp(t.created_at)}, replaced in the same write"
            elif until is not None:
                believed = f"{span(t.created_at, until)}, withdrawn"
            else:
                believed = f"since {stamp(t.created_at)}"
            add_row(grid, span(t.valid_at, t.invalid_at), believed, u.content, u.id)
            for e in entry["earlier"]:  # what it was believed to be before an ending came to be known
                add_row(
                    grid,
                    "",
                    f"  until {stamp(e['until'])}",
                    f"  believed {stamp(t.valid_at) or 'always'} → {stamp(e['invalid_at']) or 'open'} until then",
                    "",
                    style="dim",
                )
            for d in entry["decisions"]:
                add_row(grid, "", f"  {stamp(d.decided_at)}", f"  {d.op.value}: {d.reason}", d.id, style="dim")
        print_table(grid)

    emit({"entries": [views.history_entry(e) for e in entries]}, as_json, human)


def subjects(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Every subject holding episodes, units or decisions, with how many of each."""
    with open_mem(ctx) as mem:
        found = mem.subjects()
    rows = [views.subject(s["scope"], {k: v for k, v in s.items() if k != "scope"}) for s in found]

    def human() -> None:
        for row in rows:
            project = f" (project {row['project']})" if row["project"] else ""
            typer.echo(
                f"{row['scope']}{project}: {row['episodes']} episode(s), {row['units']} unit(s), "
                f"{row['decisions']} decision(s)"
            )
        if not rows:
            typer.echo("no subjects")

    emit({"subjects": rows}, as_json, human)


@units.command("show")
def show_unit(
    ctx: typer.Context,
    unit_id: UnitArg,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One unit as seen now (whether or not still believed), with its recall statistics and
    archive state."""
    with open_mem(ctx) as mem:
        found = mem.unit(unit_id, subject, project)
    unit, usage = found["unit"], found["usage"]

    def human() -> None:
        echo_unit(unit)
        archived = f"archived {when(usage.archived_at)}" if usage.archived_at else "searchable"
        typer.echo(f"  recalled {usage.recall_count} time(s), last {when(usage.last_recalled_at)}; {archived}")

    emit({**views.unit(unit), "usage": views.usage_record(usage)}, as_json, human)
