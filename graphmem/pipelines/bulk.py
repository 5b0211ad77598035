"""Bulk loads: a whole input into a subject that holds nothing yet, in large writes
(docs/operations.md, "Bulk loads").

A bulk load is an import (``exchange.import_plan``) in transactions of ``BATCH`` records, with
the units' vectors taken from the input where it gives them (else embedded while the part
before is written). A bulk ingest decides its episodes first on an in-memory store, with the
same policy, extractors and embedder (``GraphMem.ingest(bulk=True)``), then loads that store's
records (``plan_of``): the stored result is the one record-by-record writes leave, by
construction. Into a subject that holds records it is refused, since what is stored would take
part in every decision.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from graphmem.domain.models import RECORD_KINDS, MemoryUnit, Scope
from graphmem.errors import InvalidInput
from graphmem.pipelines.exchange import ImportStore, Plan, import_plan, key, underived
from graphmem.ports import ExchangeStore, MemoryIndex, of

#: Records per transaction of a bulk load.
BATCH = 5_000


def refuse_unless_empty(store: ExchangeStore, scope: Scope) -> None:
    """Raise ``InvalidInput`` unless the subject holds no record of any kind."""
    if any(store.dump(scope, kind, "", 1)[0] for kind in RECORD_KINDS):
        raise InvalidInput(
            f"{scope} is not empty: a bulk load writes only into a new or empty subject (load it without --bulk)"
        )


def load(
    store: ImportStore,
    index: MemoryIndex,
    plan: Plan,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Import a validated export into a subject that holds nothing, ``BATCH`` records a
    transaction; answers as ``exchange.import_plan``. Raises ``InvalidInput`` for a subject
    that holds records, else what ``import_plan`` raises."""
    refuse_unless_empty(store, plan.scope)
    return import_plan(store, index, plan, force, BATCH, progress)


def plan_of(store: ExchangeStore, scope: Scope, vectors: Mapping[str, list[float]], model: str) -> Plan:
    """Every record of a subject as an import reads its export, with its units' vectors
    (computed by ``model``)."""
    plan = Plan(scope=scope, vector_model=model)
    for kind in RECORD_KINDS:
        records, _ = store.dump(scope, kind, "", sys.maxsize)
        plan.records[kind] = [(f"{kind} {key(kind, r)}", underived(r)) for r in records]
    plan.vectors = {u.id: vectors[u.id] for _, u in of(MemoryUnit, plan.records["unit"]) if u.id in vectors}
    return plan
