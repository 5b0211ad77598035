"""Reading an export: each record checked as it comes (``Checker``), the whole file held as a
``Plan`` (``read``) with its keys as a write to its scope computes them (docs/operations.md,
"Export and import"). ``graphmem.pipelines.exchange`` writes a plan; ``graphmem.pipelines.bulk``
checks a large file first and then loads it in parts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

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
    entity_id,
    utcnow,
)
from graphmem.domain.vectors import unit_length
from graphmem.errors import InvalidInput, error_line
from graphmem.pipelines import shapes
from graphmem.ports import Record, of

#: The system times of each kind of record (when it was stored): none is after the import,
#: give or take a clock ``SKEW`` between the exporting and the importing machine. (An archive
#: time is not one: ``GraphMem.archive`` may be run for a later moment.)
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


def read(items: Iterable[tuple[str, Any]], keys: Keys | None = None) -> Plan:
    """Validate a whole export, given as (where, JSON object) pairs (``Checker``), and hold it
    as a ``Plan`` keyed by ``keys`` (told of the whole export), else by its own. Raises
    ``InvalidInput`` starting with the bad record's where."""
    checker = Checker()
    checked = [(where, added) for where, data in items if (added := checker.add(where, data)) is not None]
    return held(checker.finish(), checked, keys)


#: A record as ``Checker.add`` checked it: its kind, model and given vector.
Checked = tuple[RecordKind, Record, list[float] | None]


def held(header: Plan, checked: Iterable[tuple[str, Checked]], keys: Keys | None = None) -> Plan:
    """The header's plan holding the checked records, keyed as ``read`` keys them."""
    for where, (kind, value, vector) in checked:
        header.records[kind].append((where, value))
        if vector is not None:
            header.vectors[key(kind, value)] = vector
    return _keyed_by_its_scope(header, keys)


@dataclass
class Checker:
    """Checks an export one record at a time: each record, the header first and once, one scope
    throughout, no key twice, no system time in the future; ``finish`` checks that every edge
    and usage names a unit (and decision) of the export and no block label comes twice.
    It keeps keys and ids, not the records (``bulk.load_file`` reads a file twice)."""

    header: Plan | None = None
    seen: dict[tuple[str, Any], str] = field(default_factory=dict)
    ids: dict[str, set[str]] = field(default_factory=lambda: {"unit": set(), "decision": set()})
    named: list[tuple[str, str, str | None]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    latest: datetime = field(default_factory=lambda: utcnow() + SKEW)

    def add(self, where: str, data: Any) -> Checked | None:
        """The record (its kind, model and given vector), or None for the header."""
        vector = None
        if isinstance(data, Mapping) and data.get("type") == "unit" and "vector" in data:
            data = dict(data)
            vector = data.pop("vector")
        try:
            name, value = parse(data)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from None
        if name == "header":
            if self.header is not None:
                raise InvalidInput(f"{where}: a second header")
            self.header = Plan(scope=value.subject(), vector_model=value.vector_model)
            return None
        if self.header is None:
            raise InvalidInput(f"{where}: an export starts with its header record")
        kind = record_kind(name)
        if kind != "invalidation" and value.scope != self.header.scope:
            raise InvalidInput(f"{where}: {kind} of {value.scope}, in an export of {self.header.scope}")
        first = self.seen.setdefault((kind, identity(kind, value)), where)
        if first != where:
            raise InvalidInput(f"{where}: {describe(kind, value)} again (first at {first})")
        self._check(where, kind, value)
        return kind, value, None if vector is None else _vector(where, vector, self.header.vector_model)

    def _check(self, where: str, kind: RecordKind, value: Record) -> None:
        if kind in SYSTEM_TIMES:
            late = max((t for t in SYSTEM_TIMES[kind](value) if t is not None), default=self.latest)
            if late > self.latest:
                raise InvalidInput(
                    f"{where}: {describe(kind, value)} was stored at {shapes.time(late)}, in the future: "
                    "a record's system time is when it was stored"
                )
        if isinstance(value, MemoryUnit | Decision):
            self.ids[kind].add(value.id)
        elif isinstance(value, Invalidation):
            self.named.append((where, value.unit_id, value.decision_id))
        elif isinstance(value, Usage):
            self.named.append((where, value.unit_id, None))
        elif isinstance(value, MemoryBlock) and self.labels.setdefault(value.label, where) != where:
            raise InvalidInput(f"{where}: a second block {value.label!r} (first at {self.labels[value.label]})")

    def finish(self) -> Plan:
        """The header's (empty) plan, once every record is added."""
        if self.header is None:
            raise InvalidInput("no records: an export starts with its header record")
        for where, unit, decision in self.named:
            if decision is None and unit not in self.ids["unit"]:
                raise InvalidInput(f"{where}: names a unit that is not in the export")
            if decision is not None and (unit not in self.ids["unit"] or decision not in self.ids["decision"]):
                raise InvalidInput(f"{where}: names a unit or decision that is not in the export")
        return self.header


def _vector(where: str, vector: Any, model: str | None) -> list[float]:
    """A unit's given vector, checked with the rest of the file (so a bad one stores nothing):
    numbers, under a header that names their model, with a direction; scaled to length 1 as an
    embedder's are."""
    if model is None:
        raise InvalidInput(f"{where}: a unit's vector needs the header's vector_model (the model that computed it)")
    # Types compared as a set: a million vectors are read this way (bool is a type of its own).
    numbers = isinstance(vector, list) and bool(vector) and set(map(type, vector)) <= {int, float}
    try:
        scaled = unit_length(list(map(float, vector))) if numbers else None
    except OverflowError:  # an integer beyond the float range
        scaled = None
    if scaled is None:
        raise InvalidInput(f"{where}: vector: must be a non-empty list of finite numbers, not all zero")
    return scaled


def _keyed_by_its_scope(plan: Plan, keys: Keys | None = None) -> Plan:
    """The plan with its keys as a write to its scope computes them (``Keys``, told of the
    plan's entities and units unless given)."""
    if keys is None:
        keys = Keys(plan.scope)
        entities = [(where, keys.entity(e)) for where, e in of(Entity, plan.records["entity"])]
        plan.records["entity"] = [(where, e) for where, e in entities if e is not None]
        for where, u in of(MemoryUnit, plan.records["unit"]):
            keys.unit(where, u)
    else:
        plan.records["entity"] = [(where, keys.keyed(e)) for where, e in of(Entity, plan.records["entity"])]
    for kind in ("unit", "decision"):
        plan.records[kind] = [(where, keys.moved(r)) for where, r in plan.records[kind]]
    return plan


@dataclass
class Keys:
    """Entities' ids and each single-valued slot's timeline group keyed as a write to ``scope``
    keys them today (``entity_id``, ``Triple.slot``). An export whose scope was edited (a
    subject moved by hand) or written by a release that normalised names otherwise carries keys
    no later write computes: a new value would not end the imported one (the slot would hold
    two), and a name would have two entities. Told every entity and unit before ``moved``."""

    scope: Scope
    entities: set[str] = field(default_factory=set)
    groups: dict[str, str] = field(default_factory=dict)

    def entity(self, entity: Entity) -> Entity | None:
        """The entity under its id, or None when an earlier one has that id."""
        keyed = self.keyed(entity)
        if keyed.id in self.entities:
            return None
        self.entities.add(keyed.id)
        return keyed

    def keyed(self, entity: Entity) -> Entity:
        return entity.model_copy(update={"id": entity_id(self.scope, entity.name)})

    def unit(self, where: str, unit: MemoryUnit) -> None:
        if unit.group and unit.group.startswith("slot:") and unit.triple is not None:
            slot = "slot:" + unit.triple.slot(self.scope)
            if self.groups.setdefault(unit.group, slot) != slot:
                raise InvalidInput(f"{where}: unit {unit.id} shares its timeline group with a unit of another slot")

    def moved(self, record: Record) -> Record:
        """A unit or decision with its timeline group keyed anew; any other record as it is."""
        if isinstance(record, MemoryUnit) and (group := self._anew(record.group)):
            return record.model_copy(update={"group": group})
        event = record.event if isinstance(record, Decision) else None
        if event is not None and (group := self._anew(event.group)):
            return record.model_copy(update={"event": event.model_copy(update={"group": group})})
        return record

    def _anew(self, group: str | None) -> str | None:
        """The group's new key, or None when it keeps its own."""
        new = self.groups.get(group) if group is not None else None
        return new if new != group else None
