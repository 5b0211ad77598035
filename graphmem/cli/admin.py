"""`graphmem init|doctor|stats`: schema, health checks and counts."""

from __future__ import annotations

from typing import Any

import typer

from graphmem.cli.common import JsonOpt, emit, error_line, fail, guard, open_conn, settings


def init(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Apply schema migrations (idempotent) and create the vector indexes for the embedder."""
    from graphmem.adapters.neo4j_index import Neo4jIndex
    from graphmem.embed import make_embedder

    with open_conn(ctx, migrate=False) as conn:
        applied, already = conn.migrate()
        Neo4jIndex(conn, make_embedder(settings(ctx))).ensure()
    emit(
        {"applied": applied, "already_applied": already},
        as_json,
        f"applied {len(applied)} migration(s): {', '.join(applied) or '-'}; {len(already)} already applied",
    )


def doctor(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Check connectivity, server version, migrations, indexes, embedder and tokenizer."""
    from graphmem.adapters.neo4j_driver import Neo4jConnection
    from graphmem.adapters.neo4j_index import Neo4jIndex
    from graphmem.cypher import migrations
    from graphmem.embed import make_embedder
    from graphmem.tokens import TiktokenCounter

    checks: list[dict[str, Any]] = []

    def check(name: str, fn) -> Any:
        try:
            ok, detail, value = fn()
        except Exception as exc:  # a doctor reports every failure, it never stops at one
            ok, detail, value = False, error_line(exc), None
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        return value

    cfg = settings(ctx)
    conn = None
    try:
        opened: list = []

        def _connect():
            opened.append(Neo4jConnection(cfg))
            version, edition = opened[0].server_version()
            return True, f"{cfg.neo4j_uri}: Neo4j {version} {edition}", opened[0]

        conn = check("connectivity", _connect)
        if conn is None and opened:
            opened[0].close()
        if conn is not None:
            def _migrations():
                done = {row["id"] for row in conn.read("admin/applied_migrations")}
                pending = [m.name for m in migrations() if m.number not in done]
                return not pending, f"pending: {', '.join(pending)} (run `graphmem init`)" if pending else "all applied", None
            check("migrations", _migrations)

            def _indexes():
                states = conn.read("index/index_states")
                bad = [f"{s['name']}={s['state']}" for s in states if s["state"] != "ONLINE"]
                names = {s["name"] for s in states}
                missing = sorted({"unit_embedding", "entity_embedding", "unit_text", "entity_text"} - names)
                ok = not bad and not missing
                detail = ", ".join([*bad, *(f"{m} missing" for m in missing)]) or f"{len(states)} online"
                return ok, detail, None
            check("indexes", _indexes)

        def _embedder():
            embedder = make_embedder(cfg)
            vector = embedder.embed(["graphmem doctor"])[0]
            ok = len(vector) == embedder.dimension
            detail = f"{embedder.name} ({embedder.dimension} dims)"
            if conn is not None:
                stored = Neo4jIndex(conn, embedder).stored_model()
                if stored is not None and tuple(stored) != (embedder.name, embedder.dimension):
                    ok = False
                    detail += f"; index built with {stored[0]} ({stored[1]} dims): run `graphmem index rebuild`"
            return ok, detail, None
        check("embedder", _embedder)

        def _tokenizer():
            counter = TiktokenCounter()
            n = counter.count("I moved to Berlin last month.")
            return n > 0, f"{counter.name}: sample is {n} tokens", None
        check("tokenizer", _tokenizer)
    finally:
        if conn is not None:
            conn.close()

    ok = all(c["ok"] for c in checks)

    def human() -> None:
        for c in checks:
            typer.echo(f"[{'ok' if c['ok'] else 'FAIL'}] {c['check']}: {c['detail']}")
    emit({"ok": ok, "checks": checks}, as_json, human)
    if not ok:
        raise typer.Exit(1)


def stats(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Counts of units, searchable units and entities, and the index model."""
    from graphmem.adapters.neo4j_index import Neo4jIndex
    from graphmem.embed import make_embedder

    with open_conn(ctx) as conn:
        status = Neo4jIndex(conn, make_embedder(settings(ctx))).status()
        migrations_applied = len(conn.read("admin/applied_migrations"))
    counts = {k: v for k, v in status.items() if k not in ("indexes", "embedder")}
    counts["migrations"] = migrations_applied
    emit(counts, as_json, lambda: [typer.echo(f"{k}: {v}") for k, v in counts.items()])


__all__ = ["doctor", "init", "stats", "fail", "guard"]
