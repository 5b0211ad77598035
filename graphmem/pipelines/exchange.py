"""Export and import of a whole subject, lossless on both time axes (docs/operations.md,
"Export and import").

- An export is JSON Lines: a header (``Header``), then every record of the scope kind by kind
  (``RECORD_KINDS``), each ``{"type": kind, ...}`` in its JSON form (``graphmem.pipelines.shapes``).
- Nothing derived is exported: search entries, entity words, mention links, the links between
  records. Nor are lock versions (they only order writers in flight) and commit keys: an import
  is idempotent by the records' own ids.
- An import validates every record before it writes anything (``read``), refuses a subject
  erased here unless forced, skips a record already stored and refuses another one under the
  same key (``Conflict``, nothing written).
- It writes in bounded transactions, each unit whole with what says what it is (``_parts``): an
  import cut short never shows a unit current that the export ends or archives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from graphmem.domain.models import (
    RECORD_KINDS,
    STORED,
    Decision,
    Deletion,
    Entity,
    Episode,
    Invalidation,
    MemoryBlock,
    MemoryUnit,
    Model,
    RecordKind,
    ReviewItem,
    Scope,
    StoredTrace,
    Usage,
    UTCDatetime,
    WriteBatch,
    entity_id,
    utcnow,
)
from graphmem.domain.vectors import unit_length
from graphmem.errors import Conflict, InvalidInput, error_line
from graphmem.pipelines import shapes
from graphmem.pipelines.write import mention_links
from graphmem.ports import BlockStore, ErasureStore, ExchangeStore, MemoryIndex, Record, UnitStore, each, of

#: The system times of each kind of record (when it was stored): none is after the import,
#: give or take a clock ``SKEW`` between the exporting and the importing machine. (An archive
#: time is not one: ``GraphMem.archive`` may be run for a later moment.)
SYSTEM_TIMES: dict[RecordKind, Callable[[Any], list[datetime | None]]] = {
    "unit": lambda r: [r.time.created_at],
    "decision": lambda r: [r.decided_at],
    "invalidation": lambda r: [r.expired_at],
    "deletion": lambda r: [r.deleted_at],
    "trace": lambda r: [r.created_at],
    "review": lambda r: [r.created_at, r.decided_at],
}
SKEW = timedelta(days=1)

FORMAT = "graphmem-export"
VERSION = 1
#: Records per transaction on import, and per read on export.
BATCH = 500

MODELS: dict[str, type[Record]] = {
    "episode": Episode,
    "entity": Entity,
    "unit": MemoryUnit,
    "deletion": Deletion,
    "decision": Decision,
    "invalidation": Invalidation,
    "usage": Usage,
    "block": MemoryBlock,
    "review": ReviewItem,
    "trace": StoredTrace,
}


class Header(Model):
    """The first record of an export."""

    type: Literal["header"]
    format: Literal["graphmem-export"]
    version: Literal[1]
    scope: str
    project: str | None = None
    exported_at: UTCDatetime
    #: The embedding model of the units' ``vector`` fields, when they carry one.
    vector_model: str | None = None

    def subject(self) -> Scope:
        return Scope.parse(self.scope, self.project, stored=True)


def export(
    store: ExchangeStore, scope: Scope, batch: int = BATCH, now: datetime | None = None
) -> Iterator[dict[str, Any]]:
    """The header, then every record of the scope, kind by kind, read a page at a time."""
    yield shapes.header(scope, now or utcnow(), FORMAT, VERSION)
    for kind in RECORD_KINDS:
        after: str | None = ""
        while after is not None:
            page, after = store.dump(scope, kind, after, batch)
            for record in page:
                yield {"type": kind, **shapes.SHAPES[kind](record)}


def key(kind: RecordKind, record: Record) -> str:
    """What ``MemoryStore.lookup`` finds a record by."""
    if isinstance(record, Invalidation):
        return record.decision_id
    return record.unit_id if isinstance(record, Usage) else record.id


def identity(kind: RecordKind, record: Record) -> Any:
    """What one record is: its key, or for an edge its unit, decision and system time."""
    if isinstance(record, Invalidation):
        return (record.unit_id, record.decision_id, record.expired_at)
    return key(kind, record)


def describe(kind: RecordKind, record: Record) -> str:
    if isinstance(record, Invalidation):
        at = shapes.time(record.expired_at)
        return f"invalidation of unit {record.unit_id} by decision {record.decision_id} at {at}"
    return f"{kind} {key(kind, record)}"


def parse(data: Any) -> tuple[str, Any]:
    """One record (a JSON object) as ``("header", Header)`` or ``(kind, model)``; raises
    ``InvalidInput`` naming the bad field. A unit's ``expired_at``, ``last_recalled_at`` and
    ``recall_count`` are derived (from invalidation and usage records) and not read; nor are an
    episode's ``derived_ids``."""
    if not isinstance(data, Mapping):
        raise InvalidInput("a record is a JSON object")
    fields = dict(data)
    kind = fields.pop("type", None)
    try:
        if kind == "header":
            header = Header.model_validate(data)
            header.subject()  # a header names a valid subject
            return "header", header
        if kind not in MODELS:
            what = "missing" if kind is None else f"{kind!r} is not a record type"
            raise InvalidInput(f"type: {what}: use header|{'|'.join(RECORD_KINDS)}")
        if kind != "invalidation":
            subject = fields.pop("scope", None)
            if not isinstance(subject, str):
                raise InvalidInput("scope: must be a string TYPE:ID")
            fields["scope"] = scope = Scope.parse(subject, fields.pop("project", None), stored=True)
            _scope_candidates(fields, scope)
        value: Record = MODELS[kind].model_validate(fields, context=STORED)
    except ValidationError as exc:
        raise InvalidInput(f"{kind} {error_line(exc)}") from None
    except ValueError as exc:
        raise InvalidInput(error_line(exc)) from None
    return kind, underived(value)


def underived(value: Record) -> Record:
    """A record without what an import derives again: a unit's ``expired_at``,
    ``last_recalled_at`` and ``recall_count``, an episode's ``derived_ids``."""
    if isinstance(value, MemoryUnit):
        return value.model_copy(
            update={
                "time": value.time.model_copy(update={"expired_at": None, "last_recalled_at": None, "recall_count": 0})
            }
        )
    if isinstance(value, Episode):
        return value.model_copy(update={"derived_ids": ()})
    return value


def record_kind(kind: str) -> RecordKind:
    """``kind`` as the ``RecordKind`` it names."""
    for known in RECORD_KINDS:
        if known == kind:
            return known
    raise InvalidInput(f"type: {kind!r} is not a record type")


def _scope_candidates(fields: dict[str, Any], scope: Scope) -> None:
    """Candidates inside a record are written without the scope they share with it."""
    if isinstance(fields.get("candidate"), Mapping):
        fields["candidate"] = {**fields["candidate"], "scope": scope}
    event = fields.get("event")
    if isinstance(event, Mapping) and isinstance(event.get("candidate"), Mapping):
        fields["event"] = {**event, "candidate": {**event["candidate"], "scope": scope}}


@dataclass
class Plan:
    """A validated export, ready to import: its scope and its records by kind, each with where
    it was read (for messages)."""

    scope: Scope
    records: dict[RecordKind, list[tuple[str, Record]]] = field(default_factory=lambda: {k: [] for k in RECORD_KINDS})
    #: Units' vectors given with them, by unit id, and their model (``Header.vector_model``).
    vectors: dict[str, list[float]] = field(default_factory=dict)
    vector_model: str | None = None


def read(items: Iterable[tuple[str, Any]]) -> Plan:
    """Validate a whole export, given as (where, JSON object) pairs: each record, the header
    first and once, one scope throughout, no key twice, and every edge and usage naming a unit
    (and decision) of the export. Raises ``InvalidInput`` starting with the bad record's where."""
    plan: Plan | None = None
    seen: dict[tuple[str, Any], str] = {}
    for where, data in items:
        vector = None
        if isinstance(data, Mapping) and data.get("type") == "unit" and "vector" in data:
            data = dict(data)
            vector = data.pop("vector")
        try:
            name, value = parse(data)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from None
        if name == "header":
            if plan is not None:
                raise InvalidInput(f"{where}: a second header")
            plan = Plan(scope=value.subject(), vector_model=value.vector_model)
            continue
        if plan is None:
            raise InvalidInput(f"{where}: an export starts with its header record")
        if vector is not None:
            plan.vectors[value.id] = _vector(where, vector, plan.vector_model)
        kind = record_kind(name)
        if kind != "invalidation" and value.scope != plan.scope:
            raise InvalidInput(f"{where}: {kind} of {value.scope}, in an export of {plan.scope}")
        first = seen.setdefault((kind, identity(kind, value)), where)
        if first != where:
            raise InvalidInput(f"{where}: {describe(kind, value)} again (first at {first})")
        plan.records[kind].append((where, value))
    if plan is None:
        raise InvalidInput("no records: an export starts with its header record")
    latest = utcnow() + SKEW
    for kind, times in SYSTEM_TIMES.items():
        for where, r in plan.records[kind]:
            if (late := max((t for t in times(r) if t is not None), default=latest)) > latest:
                raise InvalidInput(
                    f"{where}: {describe(kind, r)} was stored at {shapes.time(late)}, in the future: "
                    "a record's system time is when it was stored"
                )
    units = {r.id for _, r in of(MemoryUnit, plan.records["unit"])}
    decisions = {r.id for _, r in of(Decision, plan.records["decision"])}
    for where, i in of(Invalidation, plan.records["invalidation"]):
        if i.unit_id not in units or i.decision_id not in decisions:
            raise InvalidInput(f"{where}: names a unit or decision that is not in the export")
    for where, u in of(Usage, plan.records["usage"]):
        if u.unit_id not in units:
            raise InvalidInput(f"{where}: names a unit that is not in the export")
    labels: dict[str, str] = {}
    for where, b in of(MemoryBlock, plan.records["block"]):
        if labels.setdefault(b.label, where) != where:
            raise InvalidInput(f"{where}: a second block {b.label!r} (first at {labels[b.label]})")
    return _keyed_by_its_scope(plan)


def _vector(where: str, vector: Any, model: str | None) -> list[float]:
    """A unit's given vector, checked with the rest of the file (so a bad one stores nothing):
    numbers, under a header that names their model, with a direction; scaled to length 1 as an
    embedder's are."""
    if model is None:
        raise InvalidInput(f"{where}: a unit's vector needs the header's vector_model (the model that computed it)")
    numbers = isinstance(vector, list) and all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector)
    try:
        scaled = unit_length([float(x) for x in vector]) if numbers and vector else None
    except OverflowError:  # an integer beyond the float range
        scaled = None
    if scaled is None:
        raise InvalidInput(f"{where}: vector: must be a non-empty list of finite numbers, not all zero")
    return scaled


def _keyed_by_its_scope(plan: Plan) -> Plan:
    """The plan with its entities' ids and each single-valued slot's timeline group keyed as
    a write to its scope keys them today (``entity_id``, ``Triple.slot``). An export whose scope
    was edited (a subject moved by hand) or written by a release that normalised names
    otherwise carries keys no later write computes: a new value would not end the imported
    one (the slot would hold two), and a name would have two entities."""
    entities: dict[str, tuple[str, Record]] = {}
    for where, e in of(Entity, plan.records["entity"]):
        key = entity_id(plan.scope, e.name)
        entities.setdefault(key, (where, e.model_copy(update={"id": key})))
    plan.records["entity"] = list(entities.values())
    moved: dict[str, str] = {}
    for where, u in of(MemoryUnit, plan.records["unit"]):
        if u.group and u.group.startswith("slot:") and u.triple is not None:
            slot = "slot:" + u.triple.slot(plan.scope)
            if moved.setdefault(u.group, slot) != slot:
                raise InvalidInput(f"{where}: unit {u.id} shares its timeline group with a unit of another slot")
    moved = {old: new for old, new in moved.items() if old != new}
    if not moved:
        return plan
    plan.records["unit"] = [
        (w, u.model_copy(update={"group": moved.get(u.group, u.group) if u.group is not None else None}))
        for w, u in of(MemoryUnit, plan.records["unit"])
    ]
    plan.records["decision"] = [
        (
            w,
            d.model_copy(update={"event": d.event.model_copy(update={"group": moved[d.event.group]})})
            if d.event is not None and d.event.group in moved
            else d,
        )
        for w, d in of(Decision, plan.records["decision"])
    ]
    return plan


class ImportStore(ExchangeStore, ErasureStore, BlockStore, UnitStore, Protocol):
    """What an import reads (erasures, stored records, block labels, known names) and loads."""


def import_plan(
    store: ImportStore,
    index: MemoryIndex,
    plan: Plan,
    force: bool = False,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Write a validated export (see the module docstring). Returns the scope and, per kind,
    how many records were ``imported`` and how many were already stored (``skipped``).
    ``progress`` is told how many records each write stored (skipped ones count at once).

    Raises:
        Conflict: the subject was erased here and the import would write something (and not
            ``force``), or a key is held by another record (of another subject, or with other
            content); nothing is written then.
    """
    scope = plan.scope
    fresh, skipped = _new(store, plan, batch)
    # An erased subject comes back only when forced; an import that would write nothing (the
    # same file again after a forced one) is no return of what was erased, so it skips as any.
    if not force and any(fresh.values()) and store.erased(scope):
        raise Conflict(
            f"{scope} was erased from this database: import it again only with force (--force, force=true over HTTP)"
        )
    if progress:
        progress(sum(skipped.values()))
    # Mention links are derived: drawn with what every imported text makes known, and, for
    # texts stored before, by the names new here (with the first texts, before those are
    # searchable, as a write draws them).
    links = mention_links(store, scope, each(MemoryUnit, fresh["unit"]), each(Episode, fresh["episode"]))
    anchored: RecordKind = "unit" if fresh["unit"] else "episode"
    anchors = links.get("anchors", ())
    given = plan.vectors if plan.vector_model == index.embedder.name else {}
    parts = list(_parts(fresh, batch))
    # Search entries are written with their units: the next part's vectors are computed while
    # a part is written, so the embedder and the database work at once.
    with ThreadPoolExecutor(max_workers=1) as ahead:
        embedding = [ahead.submit(_vectors, index, given, part.get("unit", ())) for part in parts[:1]]
        for n, part in enumerate(parts):
            if n + 1 < len(parts):
                embedding.append(ahead.submit(_vectors, index, given, parts[n + 1].get("unit", ())))
            derived = WriteBatch()
            if part.get(anchored) and anchors:  # with the first texts, before those are searchable
                derived, anchors = WriteBatch(anchors=anchors), ()
            if part.get("unit"):
                units = each(MemoryUnit, part["unit"])
                derived = derived.model_copy(
                    update={
                        "vectors": embedding[n].result(),
                        "vector_model": index.embedder.name,
                        "unit_mentions": {u.id: links["unit_mentions"][u.id] for u in units},
                    }
                )
            if part.get("episode"):
                derived = derived.model_copy(
                    update={
                        "episode_mentions": {
                            e.id: links["episode_mentions"][e.id] for e in each(Episode, part["episode"])
                        }
                    }
                )
            store.load(scope, part, derived)
            if progress:
                progress(sum(map(len, part.values())))
    return {
        **shapes.scope(scope),
        "imported": {k: len(fresh[k]) for k in RECORD_KINDS},
        "skipped": {k: skipped[k] for k in RECORD_KINDS},
    }


def _vectors(index: MemoryIndex, given: Mapping[str, list[float]], records: Iterable[Record]) -> dict[str, list[float]]:
    """The units' vectors: those the export gives (of this index's model), the rest embedded."""
    units = each(MemoryUnit, records)
    missing = [u for u in units if len(given.get(u.id, ())) != index.embedder.dimension]
    embedded = dict(zip((u.id for u in missing), index.vectors([u.searched for u in missing]))) if missing else {}
    return {u.id: embedded.get(u.id) or given[u.id] for u in units}


#: Record kinds that say together what is true: a unit, the decisions that made or ended it,
#: its invalidations and its archive state, and everything of its timeline group.
_LINKED: tuple[RecordKind, ...] = ("unit", "deletion", "decision", "invalidation", "usage")


def _parts(fresh: dict[RecordKind, list[Record]], batch: int) -> Iterator[dict[RecordKind, list[Record]]]:
    """The records to write, in transactions of about ``batch`` records: entities and
    episodes first; then the linked kinds whole (``_LINKED``: what links them by id or timeline
    group goes in one transaction, so a cut-short import never shows a unit without what
    ended or archived it, and a re-run writes whole parts); then blocks, reviews and traces."""
    yield from _chunks(fresh, ("entity", "episode"), batch)
    part: dict[RecordKind, list[Record]] = {}
    for component in _components(fresh):
        for kind, record in component:
            part.setdefault(kind, []).append(record)
        if sum(map(len, part.values())) >= batch:
            yield part
            part = {}
    if part:
        yield part
    yield from _chunks(fresh, ("block", "review", "trace"), batch)


def _chunks(
    fresh: dict[RecordKind, list[Record]], kinds: Iterable[RecordKind], batch: int
) -> Iterator[dict[RecordKind, list[Record]]]:
    """The records of each of ``kinds``, ``batch`` at a time, one kind a part."""
    for kind in kinds:
        for start in range(0, len(fresh[kind]), batch):
            yield {kind: fresh[kind][start : start + batch]}


def _components(fresh: dict[RecordKind, list[Record]]) -> list[list[tuple[RecordKind, Record]]]:
    """The linked records (``_LINKED``) grouped by what links them: a decision to the units it
    targeted and produced and to its deletion, an invalidation to its unit and decision, usage
    to its unit, a unit or decision to its timeline group. Each group keeps the records' order."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def root(node: tuple[str, str]) -> tuple[str, str]:
        while parent.setdefault(node, node) != node:
            parent[node] = node = parent[parent[node]]
        return node

    def join(node: tuple[str, str], *others: tuple[str, str | None]) -> None:
        for kind, other in others:
            if other is not None:
                parent[root((kind, other))] = root(node)

    items = [(kind, r) for kind in _LINKED for r in fresh[kind]]
    for _, r in items:
        if isinstance(r, MemoryUnit):
            join(("unit", r.id), ("group", r.group))
        elif isinstance(r, Decision):
            join(
                ("decision", r.id),
                ("unit", r.target_id),
                ("unit", r.produced_id),
                ("deletion", r.deletion_id),
                ("group", r.event.group if r.event else None),
            )
        elif isinstance(r, Invalidation):
            join(("unit", r.unit_id), ("decision", r.decision_id))
        elif isinstance(r, Usage):
            join(("unit", r.unit_id))
        else:
            join(("deletion", r.id))
    components: dict[tuple[str, str], list[tuple[RecordKind, Record]]] = {}
    for kind, r in items:
        own = ("unit", r.unit_id) if isinstance(r, Invalidation | Usage) else (kind, r.id)
        components.setdefault(root(own), []).append((kind, r))
    return list(components.values())


def _new(store: ImportStore, plan: Plan, batch: int) -> tuple[dict[RecordKind, list[Record]], Counter[str]]:
    """The records of the plan not stored yet, by kind, and how many of each are; ``Conflict``
    when a key is held by another record."""
    scope = plan.scope
    fresh: dict[RecordKind, list[Record]] = {}
    skipped: Counter[str] = Counter()
    for kind in RECORD_KINDS:
        items = plan.records[kind]
        stored: dict[Any, Record] = {}
        keys = sorted({key(kind, r) for _, r in items})
        for start in range(0, len(keys), batch):
            found, elsewhere = store.lookup(scope, kind, keys[start : start + batch])
            if elsewhere:
                raise Conflict(f"{kind} {min(elsewhere)} already exists in another subject")
            stored.update((identity(kind, r), r) for r in found)
        fresh[kind] = []
        for where, r in items:
            old = stored.get(identity(kind, r))
            if old is None:
                fresh[kind].append(r)
            elif same(kind, old, r) or kind == "usage":
                # Recall statistics count on after an export: the stored ones are the newer.
                skipped[kind] += 1
            else:
                raise Conflict(f"{where}: {describe(kind, r)} already exists with other content")
    labels = {b.label: b.id for b in store.list_blocks(scope)}
    for block in each(MemoryBlock, fresh["block"]):
        if block.label in labels:
            raise Conflict(f"block {block.label!r} of {scope} already exists as block {labels[block.label]}")
    return fresh, skipped


def same(kind: RecordKind, stored: Record, given: Record) -> bool:
    """Whether a stored record is the given one: an episode by its fingerprint (what "the same
    content" means for an episode id), anything else by its whole record."""
    if isinstance(stored, Episode) and isinstance(given, Episode):
        return stored.fingerprint == given.fingerprint
    return shapes.SHAPES[kind](stored) == shapes.SHAPES[kind](given)
