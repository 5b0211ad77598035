"""`graphmem init|doctor|stats`: schema, health checks and counts."""

from __future__ import annotations

import typer

from graphmem.cli.common import JsonOpt, emit, open_mem, settings, shown


def init(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Apply schema migrations (idempotent) and create the vector indexes for the embedder."""
    # Opened without migrating or checking, so the migrations applied now are reported here.
    with open_mem(ctx, migrate=False, check_index=False) as mem:
        result = mem.init()
    applied, already = result["applied"], result["already_applied"]
    emit(
        result,
        as_json,
        f"applied {len(applied)} migration(s): {', '.join(applied) or '-'}; {len(already)} already applied",
    )


def doctor(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Check connectivity, server version, migrations, indexes, embedder and tokenizer."""
    from graphmem.api import GraphMem  # imported on first use: the service, not needed for --help

    # Opened without touching the database: an unreachable server is a failed check. The rule
    # policy stands in for an LLM one, whose missing or silent endpoint is a failed check too.
    with open_mem(ctx, migrate=False, check_index=False, policy=GraphMem.rule_policy()) as mem:
        report = mem.doctor()
    subject = settings(ctx).subject
    # Not a check that can fail: what a command given no --subject reads and writes.
    detail = subject or "unset (GRAPHMEM_SUBJECT): commands need --subject"
    report["checks"].append({"check": "default subject", "ok": True, "detail": detail})

    def human() -> None:
        for c in report["checks"]:
            # A detail may quote a server or model endpoint: what it says is shown, never acted on.
            typer.echo(f"[{'ok' if c['ok'] else 'FAIL'}] {c['check']}: {shown(str(c['detail']))}")

    emit(report, as_json, human)
    if not report["ok"]:
        raise typer.Exit(1)


def stats(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Counts of units, searchable units and entities, the index model, migrations applied."""
    with open_mem(ctx, check_index=False) as mem:
        counts = mem.stats()
    # None is what JSON says for nothing ("building": no rebuild under way); a person reads "-".

    def human() -> None:
        for k, v in counts.items():
            typer.echo(f"{k}: {'-' if v is None else shown(str(v))}")

    emit(counts, as_json, human)
