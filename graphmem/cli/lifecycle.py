"""`graphmem forget`, `episodes list|show|delete`, `archive`, `restore`, `review ...`, `reextract`,
`traces prune`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from graphmem.cli.common import (
    ACTOR,
    JsonOpt,
    ProjectOpt,
    SubjectOpt,
    confirmed,
    emit,
    fail,
    open_mem,
    option_time,
    shown,
    stderr_progress,
    when,
)
from graphmem.cli.write import TARGET_WORDS
from graphmem.faces import views

episodes = typer.Typer(help="Episodes: list, show, delete one and what only it produced.", no_args_is_help=True)
review = typer.Typer(help="Candidates held for human review (procedural rules).", no_args_is_help=True)
traces = typer.Typer(help="Assembly traces (one per assemble): retention.", no_args_is_help=True)


class ReviewStatus(str, Enum):
    pending = "pending"
    approved = "approved"
    rejected = "rejected"
    all = "all"


EpisodeArg = Annotated[str, typer.Argument(help="The episode id.")]


def forget(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: this erases the subject for good.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Erase a subject: episodes, units, entities, decisions, traces, blocks, review items."""
    if not yes:
        fail(f"forget erases {subject} for good: add --yes to confirm", 2)
    with open_mem(ctx) as mem, stderr_progress() as progress:
        task = progress.add_task(f"erasing {subject}", total=None)
        counts = mem.forget(subject, project, progress=lambda n: progress.advance(task, n), actor=ACTOR)
    revoked = counts["revoked_keys"]
    emit(
        counts,
        as_json,
        lambda: typer.echo(
            "erased "
            + ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, int))
            + f" (erasure record {counts['erasure_id']})"
            + (f"; revoked key(s) {' '.join(revoked)}" if revoked else "")
        ),
    )


@episodes.command("list")
def list_episodes(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many.")] = 0,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000, help="At most this many.")] = 100,
    as_json: JsonOpt = False,
) -> None:
    """A page of the subject's episodes."""
    with open_mem(ctx) as mem:
        found = mem.episodes(subject, project, offset=offset, limit=limit)

    def human() -> None:
        for e in found:
            typer.echo(f"{e.id} {when(e.occurred_at)} [{shown(e.channel)}] {shown(e.raw[:80])}")
        if not found:
            typer.echo("no episodes")

    emit({"episodes": [views.episode(e) for e in found]}, as_json, human)


@episodes.command("show")
def show_episode(
    ctx: typer.Context,
    episode_id: EpisodeArg,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One episode: its text, time, channel and structured facts, and what it produced: the
    decisions taken on it, each with the unit it wrote ("units" in --json: their ids)."""
    with open_mem(ctx) as mem:
        found = mem.episode(episode_id, subject, project)
        decided = mem.decisions(subject, project, episode_id=episode_id, limit=10_000)
        texts = mem.fact_texts(decided, subject, project)
    decided = sorted(decided, key=lambda d: (d.decided_at, d.id))  # in the order they were taken
    units = [d.produced_id for d in decided if d.produced_id]

    def human() -> None:
        typer.echo(f"episode {found.id} ({shown(found.channel)}, {when(found.occurred_at)}): {shown(found.raw)}")
        for f in found.facts:
            retracts = "retracts " if f.op == "retract" else ""
            valid = f" (valid {when(f.valid_at)} → {when(f.invalid_at)})" if f.valid_at or f.invalid_at else ""
            typer.echo(
                f"  fact: {retracts}{shown(f.subject)} {shown(f.predicate)} {shown(f.object or '')}".rstrip() + valid
            )
        for d in decided:
            fact = texts.get(d.produced_id or "") or d.candidate or ""
            unit = f" (unit {shown(d.produced_id)})" if d.produced_id else ""
            target = texts.get(d.target_id or "")
            also = f"; {TARGET_WORDS[d.op]}: {shown(target)}" if target else ""
            typer.echo(f"  {d.op.value}: {shown(fact)}{unit}{also}")
        if not decided:
            typer.echo("  no decisions (run `graphmem complete` if it was stored without them)")

    emit({**views.episode(found), "decisions": views.decision_log(decided, texts), "units": units}, as_json, human)


@episodes.command("delete")
def delete_episode(
    ctx: typer.Context,
    episode_id: EpisodeArg,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm without being asked.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete one episode, the units it produced and its decisions; restore what it invalidated.

    Asks first on a terminal unless --yes; with no terminal to ask on, --yes is required."""
    confirmed(yes, f"delete episode {shown(episode_id)} of {subject} and what only it produced")
    with open_mem(ctx) as mem:
        result = mem.delete_episode(episode_id, subject, project, actor=ACTOR)
    emit(
        result,
        as_json,
        lambda: typer.echo(
            f"deleted episode {episode_id}: {result['units']} unit(s), {result['decisions']} decision(s); "
            f"restored {len(result['restored'])} unit(s) {' '.join(result['restored'])}".rstrip()
        ),
    )


def archive(
    ctx: typer.Context,
    subject: Annotated[str | None, typer.Option("--subject", "-s", help="TYPE:ID [default: every subject].")] = None,
    project: ProjectOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would move; change nothing.")] = False,
    now: Annotated[str | None, typer.Option("--now", help="Judge as of this time (ISO 8601) [default: now].")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Move units the policy's should_archive picks out of search; they stay in the store."""
    with open_mem(ctx) as mem:
        moved = mem.archive(subject, project, dry_run=dry_run, now=option_time(now, "--now"))
    result = {"dry_run": dry_run, "units": {s: [u.id for u in units] for s, units in moved.items()}}

    def human() -> None:
        verb = "would archive" if dry_run else "archived"
        for scope, units in moved.items():
            for u in units:
                typer.echo(f"{verb} {shown(u.id)} ({scope}): {shown(u.content)}")
        typer.echo(f"{verb} {sum(len(u) for u in moved.values())} unit(s)")

    emit(result, as_json, human)


def restore(
    ctx: typer.Context,
    unit_ids: Annotated[list[str], typer.Argument(help="Archived unit ids.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring archived units back into search."""
    with open_mem(ctx) as mem:
        restored = mem.restore(unit_ids, subject, project)
    if not restored:
        fail(f"nothing restored: no archived unit {' '.join(unit_ids)} in {subject}", 2)  # as NotFound
    emit(
        {"restored": restored},
        as_json,
        f"restored {restored} of {len(unit_ids)} unit(s)"
        + ("" if restored == len(unit_ids) else " (the others are unknown or not archived)"),
    )


@review.command("list")
def review_list(
    ctx: typer.Context,
    subject: Annotated[str | None, typer.Option("--subject", "-s", help="TYPE:ID [default: every subject].")] = None,
    project: ProjectOpt = None,
    status: Annotated[ReviewStatus, typer.Option("--status", help="Which items.")] = ReviewStatus.pending,
    as_json: JsonOpt = False,
) -> None:
    """Held candidates, oldest first."""
    with open_mem(ctx) as mem:
        items = mem.reviews(subject, project, None if status is ReviewStatus.all else status.value)
    result = {"items": [views.review(i) for i in items]}

    def human() -> None:
        for i in items:
            typer.echo(f"{shown(i.id)} [{i.status}] {i.scope}: {shown(i.candidate.content)} ({shown(i.reason)})")
        if not items:
            typer.echo("no review items")

    emit(result, as_json, human)


def _decide(ctx: typer.Context, review_id: str, approve: bool, note: str | None, as_json: bool) -> None:
    with open_mem(ctx) as mem:
        report = mem.review(review_id, approve, note, actor=ACTOR)
    result = {"id": review_id, "status": "approved" if approve else "rejected", **views.write_report(report)}
    emit(
        result,
        as_json,
        f"{result['status']} {review_id}" + (f"; units {' '.join(report.unit_ids)}" if report.unit_ids else ""),
    )


@review.command("approve")
def review_approve(
    ctx: typer.Context,
    review_id: Annotated[str, typer.Argument(help="The review item id.")],
    note: Annotated[str | None, typer.Option("--note", help="Why.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the held candidate (past the gate, still deduplicated and reconciled)."""
    _decide(ctx, review_id, True, note, as_json)


@review.command("reject")
def review_reject(
    ctx: typer.Context,
    review_id: Annotated[str, typer.Argument(help="The review item id.")],
    note: Annotated[str | None, typer.Option("--note", help="Why.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Drop the held candidate."""
    _decide(ctx, review_id, False, note, as_json)


def reextract(
    ctx: typer.Context,
    subject: SubjectOpt,
    extractor: Annotated[str, typer.Option("--extractor", help="facts|rule|llm|none")],
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-run extraction over stored episodes; old-version units are superseded with reasons."""
    with open_mem(ctx) as mem, stderr_progress() as progress:
        task = progress.add_task("re-extracting", total=None)
        report = mem.reextract(subject, extractor, project, progress=lambda n: progress.advance(task, n), actor=ACTOR)
    result = views.write_report(report)
    result["failed"] = result["extraction_failed"]  # the key this command always had
    emit(
        result,
        as_json,
        f"re-extracted {report.episodes} episode(s); decisions: "
        + (", ".join(f"{k} {v}" for k, v in sorted(report.decisions.items())) or "none"),
    )


@traces.command("prune")
def prune_traces(
    ctx: typer.Context,
    subject: Annotated[str | None, typer.Option("--subject", "-s", help="TYPE:ID [default: every subject].")] = None,
    project: ProjectOpt = None,
    older_than: Annotated[
        float | None, typer.Option("--older-than", help="Age in days [default: GRAPHMEM_TRACE_RETENTION_DAYS].")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would go; delete nothing.")] = False,
    now: Annotated[
        str | None, typer.Option("--now", help="Judge ages as of this time (ISO 8601) [default: now].")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete assembly traces older than the retention (of one subject, or of all)."""
    at = option_time(now, "--now")
    with open_mem(ctx) as mem:
        result = mem.prune_traces(subject, project, older_than_days=older_than, dry_run=dry_run, now=at)
    doc = {**result, "before": views.time(result["before"]), "subject": subject, "project": project}
    verb = "would delete" if dry_run else "deleted"
    emit(doc, as_json, f"{verb} {result['traces']} trace(s) created before {doc['before']}")
