"""`graphmem ingest|complete|remember|decisions|explain`: writing episodes and auditing decisions."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from graphmem.api import WriteReport
from graphmem.cli.common import (
    ACTOR,
    JsonOpt,
    ProjectOpt,
    SubjectOpt,
    UnitArg,
    echo_unit,
    emit,
    fail,
    input_stream,
    open_mem,
    option_time,
    shown,
    stderr_progress,
    stopping,
    waiting,
    when,
)
from graphmem.domain.models import Episode, Op
from graphmem.errors import GraphMemError, InvalidInput, error_line, one_line
from graphmem.faces import views
from graphmem.faces.episode_lines import parse_episode, read_lines

#: The fewest episodes per write when the progress bar asks for smaller writes.
PROGRESS_STEP_MIN = 25

#: ``--bulk`` of ingest and import.
BulkOpt = typer.Option(
    "--bulk",
    help="Into a new or empty subject only (else refused, exit 2): large transactions, "
    "vectors embedded while the database writes (or taken from the file).",
)

ExtractorOpt = Annotated[
    str | None,
    typer.Option("--extractor", help="facts|rule|llm|none [default: facts when an episode carries facts, else rule]."),
]


def ingest(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="A JSON Lines file of episodes, or - for stdin.")],
    extractor: ExtractorOpt = None,
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first bad line; store nothing.")] = False,
    batch: Annotated[int, typer.Option("--batch", min=1, help="At most this many episodes per write.")] = 500,
    bulk: Annotated[bool, BulkOpt] = False,
    as_json: JsonOpt = False,
) -> None:
    """Ingest episodes from JSON Lines; bad lines are reported (file:line) and skipped.

    With --bulk, into subjects that hold nothing yet: every write is decided in memory first,
    then the records are loaded in large transactions; what is stored is the same."""
    name, stream = input_stream(file)
    episodes: list[Episode] = []
    numbers: list[int] = []
    failed: list[dict] = []

    def refuse(number: int, why: str, **extra: str) -> None:
        error = one_line(f"{name}:{number}: {why}")
        failed.append({"line": number, **extra, "error": error})
        typer.echo(f"error: {shown(error)}", err=True)

    try:
        for number, line in read_lines(stream):
            try:
                if isinstance(line, InvalidInput):
                    raise line
                episodes.append(parse_episode(line))
                numbers.append(number)
            except InvalidInput as exc:
                refuse(number, error_line(exc))
                if strict:
                    break
    except OSError as exc:
        fail(f"{name}: cannot be read ({exc.strerror or exc})", 2)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()

    report = WriteReport()
    stored, broken = 0, None
    if not (strict and failed):
        with open_mem(ctx) as mem, stderr_progress() as progress:
            task = progress.add_task("ingesting", total=len(episodes))
            # Each write is one unit of progress: small enough that the bar moves every ~2%
            # (a whole file in one write left it at 0 until the end), never over --batch.
            step = min(batch, max(PROGRESS_STEP_MIN, -(-len(episodes) // 50)))
            done = 0  # episodes of the writes reported: stored and decided
            decided = 0  # with --bulk, decided in memory: stored once the load completes
            loading = progress.add_task("loading records", total=None, visible=bulk)

            # With --bulk, what is decided is reported once it is loaded: a stop before says nothing stored.
            in_memory = WriteReport()

            def written(write: WriteReport, n: int) -> None:
                nonlocal done, decided, stored
                for position, why in write.rejected:
                    refuse(numbers[decided + position], why, episode_id=episodes[decided + position].id)
                (in_memory if bulk else report).merge(write)
                decided += n
                progress.advance(task, n)
                if not bulk:
                    stored += n - len(write.rejected)
                    done = decided
                stop.between_writes(decided, len(episodes))  # no batch after this one is decided

            def loaded(n: int) -> None:
                progress.advance(loading, n)
                if stop.asked:  # between a bulk load's transactions: the rest is listed
                    raise KeyboardInterrupt

            # Ctrl-C or a `kill` (SIGTERM) stops it after the write committing, with the rest
            # listed; a second one at once.
            try:
                with stopping() as stop:
                    mem.ingest(
                        episodes, extractor, actor=ACTOR, batch=step, on_write=written, bulk=bulk, progress=loaded
                    )
                if bulk:
                    report.merge(in_memory)
                    stored, done = decided - len(report.rejected), decided
            except BaseException as exc:
                interrupted = stop.stopped(exc)
                if not (interrupted or isinstance(exc, GraphMemError)):
                    raise
                if isinstance(exc, InvalidInput) and done == 0 and not interrupted:
                    raise  # bad usage (an unknown extractor, a subject not empty for --bulk): nothing written
                # Each write is one transaction and none after the failure (or the stop)
                # committed: re-running the same file completes it without duplicates.
                broken = exc
                why = "interrupted" if interrupted else error_line(exc)
                for number, episode in zip(numbers[done:], episodes[done:]):
                    failed.append(
                        {
                            "line": number,
                            "episode_id": episode.id,
                            "error": one_line(f"{name}:{number}: episode {episode.id} not confirmed stored: {why}"),
                        }
                    )
        if broken is not None:  # once the progress bar is gone, on a line of its own
            typer.echo(
                f"error: {shown(why)} ({len(episodes) - done} episode(s) not confirmed stored, "
                f"lines {spans(numbers[done:])} of {name}; re-run{' without --bulk' if bulk else ''} to complete)",
                err=True,
            )
    failed.sort(key=lambda f: f["line"])
    result = views.ingest(report, stored, failed)

    def human() -> None:
        counts = ", ".join(f"{op} {n}" for op, n in result["decisions"].items())
        typer.echo(f"{stored} episode(s) ingested ({report.new_episodes} new); decisions: {counts}")
        unsent = len(episodes) - done if broken is not None else 0  # listed, not refused
        if len(failed) > unsent:
            typer.echo(f"{len(failed) - unsent} line(s) failed" + (" (strict: nothing stored)" if strict else ""))
        if unsent:
            typer.echo(f"{unsent} line(s) not confirmed stored")
        for item in result["extraction_failed"]:
            typer.echo(f"extraction failed for episode {shown(item['episode_id'])}: {shown(item['error'])}")

    emit(result, as_json, human)
    if broken is not None:
        raise typer.Exit(130 if why == "interrupted" else getattr(broken, "exit_code", 1))
    if failed:
        raise typer.Exit(2)


def complete(
    ctx: typer.Context,
    subject: Annotated[str | None, typer.Option("--subject", "-s", help="TYPE:ID [default: every subject].")] = None,
    project: ProjectOpt = None,
    extractor: ExtractorOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Decide the episodes a write stored but never decided (cut short by a crash or a lost
    server: `doctor` counts them, recall says it is incomplete), as a re-run of its file would,
    without the file. Run it when no ingest is under way."""
    with open_mem(ctx) as mem, stderr_progress() as progress:
        task = progress.add_task("completing", total=mem.undecided(subject, project))
        report = mem.complete(subject, project, extractor, on_write=lambda _, n: progress.advance(task, n), actor=ACTOR)
    result = views.write_report(report)

    def human() -> None:
        if not report.episodes:
            typer.echo("nothing to complete: every episode is decided")
            return
        counts = ", ".join(f"{op} {n}" for op, n in result["decisions"].items())
        typer.echo(f"completed {report.episodes} undecided episode(s); decisions: {counts}")
        for item in result["extraction_failed"]:
            typer.echo(f"extraction failed for episode {shown(item['episode_id'])}: {shown(item['error'])}")

    emit(result, as_json, human)


def spans(numbers: list[int]) -> str:
    """Ascending line numbers as runs: [3, 4, 5, 9] -> "3-5, 9"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def remember(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The episode text.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    at: Annotated[str | None, typer.Option("--at", help="When it happened (ISO 8601) [default: now].")] = None,
    channel: Annotated[str, typer.Option("--channel", help="Where it came from.")] = "chat",
    extractor: ExtractorOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store one episode and what it teaches."""
    occurred = option_time(at, "--at")
    with open_mem(ctx) as mem, waiting("remembering (the first text loads the model)"):
        report = mem.remember(
            text, subject=subject, project=project, at=occurred, channel=channel, extractor=extractor, actor=ACTOR
        )
    result = views.write_report(report)

    def human() -> None:
        counts = ", ".join(f"{op} {n}" for op, n in result["decisions"].items() if n)
        typer.echo(f"remembered ({counts or 'no decisions'}); units: {', '.join(report.unit_ids) or '-'}")

    if report.failed:
        # The episode is stored (an extractor failure never loses it) but taught nothing: a
        # runtime failure, with the way to finish once the extractor works.
        [(episode_id, why)] = report.failed
        if as_json:
            emit(result, True, "")
        fail(
            f"{why}; episode {episode_id} is stored without its facts: run `graphmem reextract --subject "
            f"{subject} --extractor {extractor or 'rule'}` once the extractor works",
            1,
        )
    emit(result, as_json, human)


def retract(
    ctx: typer.Context,
    unit_id: UnitArg,
    subject: SubjectOpt,
    reason: Annotated[str, typer.Option("--reason", help="Why: stored with the DELETE decision.")],
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retract a fact: a DELETE decision with your reason, drawn through its timeline (what it
    had ended holds again); the fact stays in history (`history --entity E --include-expired`)."""
    with open_mem(ctx) as mem:
        report = mem.retract(unit_id, subject, reason, project, actor=ACTOR)
    result = {"unit_id": unit_id, **views.write_report(report)}
    done = result["decisions"]["DELETE"] > 0
    emit(
        result,
        as_json,
        f"retracted {unit_id}"
        if done
        else f"nothing to retract: unit {unit_id} shows no current fact (a NOOP decision says so)",
    )


def end(
    ctx: typer.Context,
    unit_id: UnitArg,
    subject: SubjectOpt,
    reason: Annotated[str, typer.Option("--reason", help="Why: stored with the UPDATE decision.")],
    at: Annotated[
        str | None, typer.Option("--at", help="When it stopped being true (ISO 8601) [default: now].")
    ] = None,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """End a fact: true until --at and no longer (what was true before stays true), unlike
    `retract` (never true); an UPDATE decision with your reason, drawn through its timeline."""
    until = option_time(at, "--at")
    with open_mem(ctx) as mem:
        report = mem.end(unit_id, subject, reason, until, project, actor=ACTOR)
    result = {"unit_id": unit_id, **views.write_report(report)}
    done = result["decisions"]["UPDATE"] > 0
    emit(
        result,
        as_json,
        f"ended {unit_id}"
        if done
        else f"nothing to end: unit {unit_id} shows no fact true then (a NOOP decision says so)",
    )


def decisions(
    ctx: typer.Context,
    subject: SubjectOpt,
    project: ProjectOpt = None,
    episode: Annotated[str | None, typer.Option("--episode", help="Only this episode's decisions.")] = None,
    op: Annotated[str | None, typer.Option("--op", help="ADD|UPDATE|DELETE|NOOP.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000, help="At most this many, newest first.")] = 100,
    as_json: JsonOpt = False,
) -> None:
    """The decision log of a subject, newest first."""
    with open_mem(ctx) as mem:
        found = mem.decisions(subject, project, episode_id=episode, op=op, limit=limit)
        texts = mem.fact_texts(found, subject, project)
    # Newest first; decisions of one write share their time, so their id orders them.
    found = sorted(found, key=lambda d: (d.decided_at, d.id), reverse=True)

    def human() -> None:
        for d in found:
            target = f" target={d.target_id}" if d.target_id else ""
            produced = f" produced={d.produced_id}" if d.produced_id else ""
            # Ids too: an import keeps the ids its export names, whatever they hold.
            typer.echo(f"{when(d.decided_at)} {d.op.value:<6} {shown(d.id + target + produced)}  {shown(d.reason)}")
            for label, text in (
                ("fact", texts.get(d.produced_id or "") or d.candidate),
                (TARGET_WORDS[d.op], texts.get(d.target_id or "")),
            ):
                if text and text not in d.reason:  # each row names its facts, once
                    typer.echo(f"    {label}: {shown(text)}")
        if not found:
            typer.echo("no decisions")

    emit({"decisions": views.decision_log(found, texts)}, as_json, human)


#: What a decision did to the unit it targets, for the decision log.
TARGET_WORDS = {Op.ADD: "bounded by", Op.UPDATE: "ends", Op.DELETE: "withdraws", Op.NOOP: "already shown by"}


def _print_trace(trace: dict) -> None:
    t = trace["trace"]
    typer.echo(f"assembly {shown(t.id)} at {when(t.created_at)} for {t.query!r}: {t.tokens} tokens")
    for block in trace["resident"]:
        typer.echo(f"resident {shown(block.id)} [{shown(block.label)}]")
    for rank, unit in enumerate(trace["recalled"], 1):
        typer.echo(f"recalled {rank}. {shown(unit.id)}: {shown(unit.content)}")


def explain(
    ctx: typer.Context,
    unit_id: Annotated[str, typer.Argument(help="A unit id, or the id of an assembly trace.")],
    subject: SubjectOpt,
    project: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Provenance of a unit (episode, extractor version, decisions with reasons,
    invalidations), or what an assembly loaded and recalled, given its trace id."""
    with open_mem(ctx) as mem:
        trace = mem.trace(unit_id, subject=subject, project=project)
        if trace is not None:
            emit(views.stored_trace(trace), as_json, lambda: _print_trace(trace))
            return
        info = mem.explain(unit_id, subject=subject, project=project)
    unit, episode = info["unit"], info["episode"]
    result = views.explanation(info)

    def human() -> None:
        echo_unit(unit)
        if episode:
            typer.echo(
                f"episode {episode.id} ({shown(episode.channel)}, {when(episode.occurred_at)}): {shown(episode.raw)}"
            )
        else:
            typer.echo(f"episode {shown(unit.source.episode_id)} (not found)")
        typer.echo(f"extractor {shown(unit.source.extractor_version)}")
        for d in info["decisions"]:
            typer.echo(f"decision {d.op.value} {shown(d.id)} by {shown(d.policy)}: {shown(d.reason)}")
        for e in result["incoming"]:
            typer.echo(
                f"invalidated by {shown(str(e.get('decision_id')))} ({e.get('op')}) at {e.get('expired_at')}: "
                f"{shown(e.get('reason') or '')}"
            )
        for e in result["outgoing"]:
            typer.echo(
                f"invalidates {shown(str(e.get('unit_id')))} ({shown(e.get('content') or '')}) "
                f"at {e.get('expired_at')}: "
                f"{shown(e.get('reason') or '')}"
            )

    emit(result, as_json, human)
