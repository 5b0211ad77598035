"""``graphmem doctor``: every health check run and reported, failures included.

Checks the database (when there is one: reachable, migrations applied, search indexes
online), shows how many episodes are stored undecided (by a write cut short: never a failure),
checks the embedder (it embeds, and the index was built with it), the tokenizer, and the LLM
endpoint when the settings use one. A check that raises is a failed check whose detail is the
error's one line; the next check still runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphmem.errors import error_line
from graphmem.ports import Database, Embedder, TokenCounter

Probe = Callable[[], tuple[bool, str]]


def doctor(
    database: Database | None,
    embedder: Embedder,
    counter: TokenCounter,
    llm: Probe | None = None,
    undecided: Callable[[], int] | None = None,
) -> dict[str, Any]:
    """``{"ok": all passed, "checks": [{"check", "ok", "detail"}, ...]}`` in the order run;
    ``llm`` probes the model endpoint when one is configured or needed; ``undecided`` counts
    the episodes stored undecided (``EpisodeStore.undecided_count``)."""
    checks: list[dict[str, Any]] = []

    def check(name: str, probe: Probe) -> bool:
        try:
            ok, detail = probe()
        except Exception as exc:  # a doctor reports every failure, it never stops at one
            ok, detail = False, error_line(exc)
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        return bool(ok)

    connected = False
    if database is None:
        check("database", lambda: (True, "none: the in-memory store"))
    else:
        connected = check("connectivity", lambda: (True, database.server()))
    if database is not None and connected:
        check("migrations", lambda: _migrations(database))
        check("indexes", lambda: _indexes(database))
    if undecided is not None and (database is None or connected):
        check("episodes", lambda: _episodes(undecided()))
    check("embedder", lambda: _embedder(embedder, database if connected else None))
    check("tokenizer", lambda: _tokenizer(counter))
    if llm is not None:
        check("llm", llm)
    return {"ok": all(c["ok"] for c in checks), "checks": checks}


def _migrations(database: Database) -> tuple[bool, str]:
    pending = database.pending_migrations()
    if pending:
        return False, f"pending: {', '.join(pending)} (run `graphmem init`)"
    return True, "all applied"


def _indexes(database: Database) -> tuple[bool, str]:
    problems = database.index_problems()
    return not problems, ", ".join(problems) or "all online"


def _episodes(undecided: int) -> tuple[bool, str]:
    # Shown, never failed: the server answers as well (readiness), only those episodes' facts
    # are missing, and a write under way holds some undecided for a moment.
    if undecided:
        return True, (
            f"{undecided} stored without their decisions (a write cut short, or one under way): "
            "recall misses what they teach; run `graphmem complete`"
        )
    return True, "all decided"


def _embedder(embedder: Embedder, database: Database | None) -> tuple[bool, str]:
    vector = embedder.embed(["graphmem doctor"])[0]
    ok = len(vector) == embedder.dimension
    detail = f"{embedder.name} ({embedder.dimension} dims)"
    stored = database.stored_model() if database is not None else None
    if stored is not None and tuple(stored) != (embedder.name, embedder.dimension):
        ok = False
        detail += f"; index built with {stored[0]} ({stored[1]} dims): run `graphmem index rebuild`"
    return ok, detail


def _tokenizer(counter: TokenCounter) -> tuple[bool, str]:
    n = counter.count("I moved to Berlin last month.")
    return n > 0, f"{counter.name}: sample is {n} tokens"
