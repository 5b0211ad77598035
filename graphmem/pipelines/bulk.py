"""Bulk loads: a whole input into a subject that holds nothing yet, in large writes
(docs/operations.md, "Bulk loads").

A bulk load is an import (``exchange.import_plan``) in transactions of ``BATCH`` records, with
the units' vectors taken from the input where it gives them (else embedded while the part
before is written). A bulk ingest decides its episodes first on an in-memory store, with the
same policy, extractors and embedder (``GraphMem.ingest(bulk=True)``), then loads that store's
records (``plan_of``): the stored result is the one record-by-record writes leave, by
construction. Into a subject that holds records it is refused, since what is stored would take
part in every decision. An export file of any size is read twice instead of held
(``load_export``).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any, Protocol, cast, runtime_checkable

from graphmem.domain.models import RECORD_KINDS, Entity, MemoryUnit, RecordKind, Scope
from graphmem.errors import Conflict, InvalidInput
from graphmem.pipelines import export_check, shapes
from graphmem.pipelines.exchange import LINKED, Components, ImportStore, import_plan
from graphmem.pipelines.export_check import Checked, Checker, Keys, Plan, key, underived
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
    with index.loading():
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


#: Records of an export loaded at once by ``load_export`` (two are held: one read while one
#: is written), and of one held whole from its first pass, as ``read`` holds it (read once).
SEGMENT = 200_000
HELD = 300_000


@runtime_checkable
class Export(Protocol):
    """An export that can be read again (a file, not a pipe): every record with its position,
    then records by position."""

    def records(self) -> Iterator[tuple[int, str, Any]]:
        """(position, where, JSON value) of each record, in order."""
        ...

    def record(self, position: int) -> Any:
        """The JSON value of the record at ``position``."""
        ...


def load_export(
    store: ImportStore,
    index: MemoryIndex,
    export: Export,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    checked: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """``load`` of an export of any size, read twice (held from the first pass up to ``HELD``
    records): checked whole first (``_Scan``: a bad record stores nothing; ``checked`` counts
    records checked), then loaded about ``SEGMENT``
    records at a time, each segment whole components of linked records
    (``exchange.Components``), as an import's parts are. Raises as ``load``, and ``Conflict``
    for a key another subject holds, before anything is written."""
    scan, told = _Scan(), 0
    for position, where, data in export.records():
        scan.add(store, position, where, data)
        if checked and len(scan.where) - told >= CHECKED:  # what the second pass will count
            checked(len(scan.where) - told)
            told = len(scan.where)
    header, keys = scan.finish()
    scope = header.scope
    if checked:
        checked(len(scan.where) - told)
    for kind, held in scan.held.items():
        ordered = sorted(held)
        for start in range(0, len(ordered), BATCH):
            if elsewhere := store.lookup(scope, kind, ordered[start : start + BATCH])[1]:
                raise Conflict(f"{kind} {min(elsewhere)} already exists in another subject")
    counts: dict[str, Counter[str]] = {"imported": Counter(), "skipped": Counter()}

    def read(segment: list[int]) -> Plan:
        if scan.kept is not None:  # a small file, held from the first pass
            plan = Plan(scope=scope, vector_model=header.vector_model)
            return export_check.held(plan, ((scan.where[p], scan.kept[p]) for p in sorted(segment)), keys)
        header_line = [("header", export.record(scan.header))]
        return export_check.read(chain(header_line, ((scan.where[p], export.record(p)) for p in sorted(segment))), keys)

    # The next segment is read while one is written, so reading waits on the database only.
    with index.loading(), ThreadPoolExecutor(max_workers=1) as ahead:
        segments = scan.segments()
        reading = [ahead.submit(read, segment) for segment in islice(segments, 1)]
        while reading:
            part = reading.pop().result()
            reading.extend(ahead.submit(read, segment) for segment in islice(segments, 1))
            done = import_plan(store, index, part, force, BATCH, progress)
            for name, counted in counts.items():
                counted.update(done[name])
    return {**shapes.scope(scope), **{name: {k: n[k] for k in RECORD_KINDS} for name, n in counts.items()}}


#: Records checked between two reports of ``load_export``'s first pass.
CHECKED = 10_000


@dataclass
class _Scan:
    """An export's first pass: every record checked (``Checker``), and of each kept only where
    it is, what links it (``Components``) and its key; a second record of an entity is left out
    (``export_check.Keys``)."""

    checker: Checker = field(default_factory=Checker)
    links: Components = field(default_factory=Components)
    keys: Keys | None = None
    header: int = -1
    where: dict[int, str] = field(default_factory=dict)
    front: list[int] = field(default_factory=list)
    linked: list[tuple[int, tuple[str, str]]] = field(default_factory=list)
    back: list[int] = field(default_factory=list)
    held: dict[RecordKind, set[str]] = field(default_factory=lambda: {kind: set() for kind in RECORD_KINDS})
    kept: dict[int, Checked] | None = field(default_factory=dict)

    def add(self, store: ExchangeStore, position: int, where: str, data: Any) -> None:
        if (added := self.checker.add(where, data)) is None:
            self.header, self.keys = position, Keys(self.checker.finish().scope)
            refuse_unless_empty(store, self.keys.scope)
            return
        if self.kept is not None:  # held while the file is small, else read again for its segment
            self.kept[position] = added
            self.kept = self.kept if len(self.kept) <= HELD else None
        kind, value, _ = added
        keys = cast(Keys, self.keys)  # ``Checker.add`` refuses a record before the header
        if isinstance(value, Entity):
            if (entity := keys.entity(value)) is None:
                return
            value = entity
        if isinstance(value, MemoryUnit):
            keys.unit(where, value)
        self.where[position] = where
        self.held[kind].add(key(kind, value))
        if kind in LINKED:
            self.linked.append((position, self.links.add(value)))
        else:
            (self.front if kind in ("entity", "episode") else self.back).append(position)

    def finish(self) -> tuple[Plan, Keys]:
        """The export's header (its scope and vector model) and keys, once every record is added."""
        return self.checker.finish(), cast(Keys, self.keys)

    def segments(self) -> Iterator[list[int]]:
        """The positions to load, about ``SEGMENT`` at a time, in ``exchange._parts``'s order:
        entities and episodes, linked components whole, then blocks, reviews and traces."""
        for start in range(0, len(self.front), SEGMENT):
            yield self.front[start : start + SEGMENT]
        components: dict[tuple[str, str], list[int]] = {}
        for position, own in self.linked:
            components.setdefault(self.links.root(own), []).append(position)
        segment: list[int] = []
        for component in components.values():
            segment.extend(component)
            if len(segment) >= SEGMENT:
                yield segment
                segment = []
        if segment:
            yield segment
        for start in range(0, len(self.back), SEGMENT):
            yield self.back[start : start + SEGMENT]
