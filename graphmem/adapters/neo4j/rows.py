"""Rows and records: models as the parameters write queries take, and stored properties back
into models. Shared by the store, the index and the migrations' live code paths.

Times go to write queries as ISO 8601 text (``wire``) and come back as driver DateTimes or,
from the recall statements, as epoch microseconds (``to_datetime`` reads both).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

from neo4j.time import DateTime

from graphmem.adapters.neo4j.driver import Embedding
from graphmem.domain.entries import Span, from_micros, spans, unit_text
from graphmem.domain.mentions import name_edges
from graphmem.domain.models import (
    STORED,
    AssembleTrace,
    Candidate,
    Decision,
    Deletion,
    Edge,
    Entity,
    Episode,
    Fact,
    GroupUnit,
    Invalidation,
    MemoryBlock,
    MemoryKind,
    MemoryUnit,
    Model,
    ReviewItem,
    Scope,
    SourceRef,
    TemporalMeta,
    TimelineEvent,
    Triple,
    entity_id,
    fingerprint,
    normalise,
    words,
)

#: A model read from stored properties (``model_from_props``).
M = TypeVar("M", bound=Model)

Row = dict[str, Any]


# -- times and scopes ---------------------------------------------------------------------------
def wire(value: datetime | None) -> str | None:
    """A time as write queries take it: ISO 8601 text that the server parses (``datetime()``).
    The driver converts each Python datetime in Python, at a cost that dominated large writes."""
    return value.isoformat() if value is not None else None


def to_datetime(value: Any) -> datetime | None:
    """A time a query returned: a driver DateTime, or epoch microseconds (recall/unit_fields)."""
    if value is None:
        return None
    if isinstance(value, int):
        return from_micros(value)
    return value.to_native() if isinstance(value, DateTime) else value


def stored_datetime(value: Any) -> datetime:
    """``to_datetime`` of a time every stored record has (a creation or system time)."""
    time = to_datetime(value)
    if time is None:
        raise ValueError("a stored record without its system time")
    return time


def native(value: Any) -> Any:
    """Driver temporal values to Python datetimes, recursively."""
    if isinstance(value, dict):
        return {k: native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [native(v) for v in value]
    return to_datetime(value) if isinstance(value, DateTime) else value


def scope_props(scope: Scope) -> Row:
    """The scope properties every node carries (so erasure is one indexed filter)."""
    return {
        "scope": scope.key,
        "subject_type": scope.subject_type.value,
        "subject_id": scope.subject_id,
        "project_id": scope.project_id,
    }


def scope_of(props: Mapping[str, Any]) -> Scope:
    """The scope a row's ``subject_type``/``subject_id``/``project_id`` name."""
    return Scope(subject_type=props["subject_type"], subject_id=props["subject_id"], project_id=props.get("project_id"))


# -- units and entities -------------------------------------------------------------------------
def unit_rows(units: Sequence[MemoryUnit]) -> dict[str, list[Row]]:
    """``store/create_units`` parameters: a row per unit, naming its subject and object
    entities by id, and each entity those name once (by id: they are merged in that order)."""
    entities: dict[str, Row] = {}
    rows = []
    for unit in units:
        about = []
        if unit.triple:
            triple = unit.triple
            for role, name in [("subject", triple.subject)] + ([("object", triple.object)] if triple.object else []):
                eid = entity_id(unit.scope, name)
                # The entity's fields straight from the unit's, already checked: no Entity per name.
                if eid not in entities:
                    entities[eid] = {
                        "id": eid,
                        "props": named_props(unit.scope, name, normalise(name), unit.time.created_at),
                    }
                about.append({"id": eid, "role": role})
        rows.append({"props": unit_row(unit), "about": about})
    return {"rows": rows, "entities": [entities[eid] for eid in sorted(entities)]}


def unit_row(unit: MemoryUnit) -> Row:
    """A unit node's properties."""
    triple = unit.triple
    return {
        **scope_props(unit.scope),
        "id": unit.id,
        "kind": unit.kind.value,
        "content": unit.content,
        "summary": unit.summary,
        "content_hash": unit.content_hash,
        "episode_id": unit.source.episode_id,
        "channel": unit.source.channel,
        "extractor_version": unit.source.extractor_version,
        "assertion_id": unit.source.assertion_id,
        "occurred_at": wire(unit.source.occurred_at),
        "group": unit.group,
        "created_at": wire(unit.time.created_at),
        "valid_at": wire(unit.time.valid_at),
        "invalid_at": wire(unit.time.invalid_at),
        "confidence": unit.confidence,
        "labels": list(unit.labels),
        "subject": triple.subject if triple else None,
        "predicate": triple.predicate if triple else None,
        "object": triple.object if triple else None,
        "single_valued": triple.single_valued if triple else None,
        "slot": triple.slot(unit.scope) if triple else None,
    }


def entity_props(entity: Entity) -> Row:
    """An entity node's properties."""
    return named_props(entity.scope, entity.name, entity.norm, entity.created_at)


def named_props(scope: Scope, name: str, norm: str, created_at: datetime | None) -> Row:
    """The properties of an entity node with this name."""
    return {**scope_props(scope), "scope_token": scope.token, **name_props(name, norm), "created_at": wire(created_at)}


def name_props(name: str, norm: str) -> Row:
    """An entity's properties that derive from its name: ``words`` (how a question names it)
    and ``first``/``last`` (how a write's word runs find it: ``names.known_names_in``)."""
    said, first, last = _derived(name, norm)
    return {"name": name, "norm": norm, "words": list(said), "first": first, "last": last}


@lru_cache(maxsize=1 << 16)  # a write names the same entities in its units and its episodes
def _derived(name: str, norm: str) -> tuple[tuple[str, ...], str | None, str | None]:
    return tuple(words(name)), *(name_edges(norm) or (None, None))


def unit_from_props(u: Mapping[str, Any], expired_at: Any = None, invalid_at: Any = None) -> MemoryUnit:
    """A unit from its node's properties, with its end and first invalidation as some system
    time sees them (``expired_at``, ``invalid_at``)."""
    triple = None
    if u.get("subject") and u.get("predicate"):
        triple = Triple(
            subject=u["subject"],
            predicate=u["predicate"],
            object=u.get("object"),
            single_valued=bool(u.get("single_valued")),
        )
    return MemoryUnit(
        id=u["id"],
        kind=MemoryKind(u["kind"]),
        scope=scope_of(u),
        content=u["content"],
        summary=u.get("summary"),
        content_hash=u["content_hash"],
        source=SourceRef(
            episode_id=u["episode_id"],
            channel=u["channel"],
            extractor_version=u["extractor_version"],
            assertion_id=u.get("assertion_id"),
            occurred_at=to_datetime(u.get("occurred_at")),
        ),
        time=TemporalMeta(
            created_at=stored_datetime(u["created_at"]),
            expired_at=to_datetime(expired_at),
            valid_at=to_datetime(u.get("valid_at")),
            invalid_at=to_datetime(invalid_at),
            last_recalled_at=to_datetime(u.get("last_recalled_at")),
            recall_count=u.get("recall_count") or 0,
        ),
        confidence=u["confidence"],
        labels=tuple(u.get("labels") or ()),
        triple=triple,
        group=u.get("group"),
    )


def unit_from_row(row: Mapping[str, Any]) -> MemoryUnit:
    """A unit from a ``{unit, expired_at, invalid_at}`` row (store/list_units)."""
    return unit_from_props(row["unit"], row["expired_at"], row["invalid_at"])


def stored_unit(u: Mapping[str, Any]) -> MemoryUnit:
    """A unit as stored: its own end, no invalidation."""
    return unit_from_props(u, None, u.get("invalid_at"))


def group_unit(row: Mapping[str, Any]) -> GroupUnit:
    """A stored unit with its own end and all its edges (store/group_state, store/units_naming)."""
    edges = sorted(
        (
            Edge(
                expired_at=stored_datetime(e["expired_at"]),
                invalid_at=to_datetime(e["invalid_at"]),
                decision_id=e["decision_id"],
                episode_id=e.get("episode_id"),
            )
            for e in row["edges"]
        ),
        key=lambda e: (e.expired_at, e.decision_id),
    )
    return GroupUnit(unit=stored_unit(row["unit"]), edges=tuple(edges), archived=bool(row.get("archived")))


# -- search entries -----------------------------------------------------------------------------
def entry_row(
    unit_id: str, scope: Scope, kind: str, text: str, span: Span, vector: list[float] | None, archived: bool
) -> Row:
    """One search entry of a unit (``graphmem.domain.entries``) as ``entries/create_entries``
    writes it."""
    props = {**scope_props(scope), "unit_id": unit_id, "scope_token": scope.token, "kind": kind, "text": text}
    props |= span.props()
    return {"props": props, "vector": Embedding(vector) if vector is not None else None, "archived": archived}


def vector_property(generation: int) -> str:
    """Where entries of an embedding generation keep their vectors (one property a generation,
    so a rebuild with another model builds aside)."""
    return f"embedding_{generation}"


def unit_entries(
    unit: MemoryUnit, edges: Iterable[tuple[datetime, datetime | None]], vector: list[float] | None, archived: bool
) -> list[Row]:
    """Every search entry a stored unit has had, from its edges."""
    text = unit_text(unit.content, unit.summary)
    return [
        entry_row(unit.id, unit.scope, unit.kind.value, text, span, vector, archived)
        for span in spans(unit.time.created_at, unit.time.valid_at, unit.time.invalid_at, edges)
    ]


# -- episodes -----------------------------------------------------------------------------------
def episode_row(episode: Episode) -> Row:
    """``store/put_episodes`` row of an episode; ``props.fingerprint`` tells a resent one."""
    facts = [f.model_dump(mode="json") for f in episode.facts]
    return {
        "id": episode.id,
        "occurred_at": wire(episode.occurred_at),
        "props": {
            **scope_props(episode.scope),
            "scope_token": episode.scope.token,
            "raw": episode.raw,
            "channel": episode.channel,
            "facts": json.dumps(facts),
            "fingerprint": fingerprint(episode.scope, episode.occurred_at, episode.raw, episode.channel, facts),
        },
    }


def episode_from_props(props: Mapping[str, Any], scope: Scope, derived_ids: Sequence[str] = ()) -> Episode:
    facts = tuple(Fact.model_validate(f, context=STORED) for f in json.loads(props["facts"] or "[]"))
    return Episode.model_validate(
        {
            "id": props["id"],
            "scope": scope,
            "occurred_at": to_datetime(props["occurred_at"]),
            "raw": props["raw"],
            "channel": props["channel"],
            "facts": facts,
            "derived_ids": tuple(derived_ids),
        },
        context=STORED,
    )


# -- decisions, invalidations and timeline events -----------------------------------------------
#: How a decision's timeline event is stored: flat ``ev_*`` properties, the candidate as JSON.
_EVENT_FIELDS = (
    "kind",
    "group",
    "single",
    "value",
    "order_at",
    "order_ep",
    "order_fact",
    "valid_at",
    "end",
    "target",
    "extractor_version",
    "channel",
    "occurred_at",
)
#: The event's times, sent as text (``wire``) and parsed by ``store/create_decisions``.
_EVENT_TIMES = ("order_at", "valid_at", "end", "occurred_at")


def event_props(event: TimelineEvent | None) -> Row:
    if event is None:
        return {}
    props = {f"ev_{k}": wire(getattr(event, k)) if k in _EVENT_TIMES else getattr(event, k) for k in _EVENT_FIELDS}
    props["ev_candidate"] = event.candidate.model_dump_json() if event.candidate else None
    return props


def event_from_props(props: Mapping[str, Any]) -> TimelineEvent | None:
    if props.get("ev_kind") is None:
        return None
    fields: Row = {k: props.get(f"ev_{k}") for k in _EVENT_FIELDS}
    raw = props.get("ev_candidate")
    return TimelineEvent(**fields, candidate=Candidate.model_validate_json(raw) if raw else None)


def decision_row(decision: Decision) -> Row:
    """``store/create_decisions`` row: the node's properties and what it links to."""
    props = {
        **scope_props(decision.scope),
        "id": decision.id,
        "op": decision.op.value,
        "target_id": decision.target_id,
        "reason": decision.reason,
        "confidence": decision.confidence,
        "policy": decision.policy,
        "decided_at": wire(decision.decided_at),
        "episode_id": decision.episode_id,
        "produced_id": decision.produced_id,
        "invalid_at": wire(decision.invalid_at),
        "candidate": decision.candidate,
        "deletion_id": decision.deletion_id,
        "actor": decision.actor,
        **event_props(decision.event),
    }
    return {
        "props": props,
        "episode_id": decision.episode_id,
        "deletion_id": decision.deletion_id,
        "target_id": decision.target_id,
        "produced_id": decision.produced_id,
    }


def decision_from_props(props: dict[str, Any], scope: Scope) -> Decision:
    return model_from_props(Decision, props, scope, event=event_from_props(native(props)))


def invalidation_row(inv: Invalidation) -> Row:
    return {**inv.model_dump(), "expired_at": wire(inv.expired_at), "invalid_at": wire(inv.invalid_at)}


# -- the other records --------------------------------------------------------------------------
def review_props(item: ReviewItem) -> Row:
    return {
        **scope_props(item.scope),
        "id": item.id,
        "status": item.status,
        "episode_id": item.episode_id,
        "extractor_version": item.extractor_version,
        "reason": item.reason,
        "created_at": item.created_at,
        "decided_at": item.decided_at,
        "note": item.note,
        "candidate": item.candidate.model_dump_json(),
    }


def review_from_props(props: dict[str, Any]) -> ReviewItem:
    p = native(props)
    fields = {
        k: p.get(k)
        for k in ("id", "episode_id", "extractor_version", "reason", "status", "created_at", "decided_at", "note")
    }
    return ReviewItem(scope=scope_of(p), candidate=Candidate.model_validate_json(p["candidate"]), **fields)


def trace_params(trace: AssembleTrace, scores: Sequence[float | None]) -> Row:
    """A trace as ``audit/put_traces`` stores it: its properties, the blocks it loaded and the
    units it recalled with their rank and score."""
    props = {**scope_props(trace.scope), **trace.model_dump(exclude={"scope", "scores"})}
    for key in ("resident_ids", "recalled_ids", "rule_ids"):
        props[key] = list(getattr(trace, key))
    recalled = [
        {"id": uid, "rank": rank, "score": scores[rank] if rank < len(scores) else None}
        for rank, uid in enumerate(trace.recalled_ids)
    ]
    return {"props": props, "resident": list(trace.resident_ids), "recalled": recalled}


def block_params(block: MemoryBlock) -> Row:
    """A block as ``blocks/put_block`` writes it."""
    props = {**scope_props(block.scope), **block.model_dump(exclude={"scope", "id"})}
    return {"scope": block.scope.key, "label": block.label, "id": block.id, "props": props}


def deletion_props(record: Deletion) -> Row:
    return {**scope_props(record.scope), **record.model_dump(exclude={"scope"})}


def mention_rows(scope: Scope, mentioned: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, list[Row]]:
    """``mentions/*_mentions`` parameters: a row per owner with the entities it names by id,
    and each entity those name once (by id: they are merged in that order)."""
    ids: dict[str, str] = {}
    entities: dict[str, Row] = {}
    rows = []
    for owner, names in mentioned.items():
        if not names:
            continue
        linked = []
        for name, kind in names:
            if name not in ids:
                norm = normalise(name)
                ids[name] = eid = entity_id(scope, name)
                entities.setdefault(eid, {"id": eid, "props": {"scope_token": scope.token, **name_props(name, norm)}})
            linked.append({"id": ids[name], "kind": kind})
        rows.append({"id": owner, "names": linked})
    return {"rows": rows, "entities": [entities[eid] for eid in sorted(entities)]}


def model_from_props(model: type[M], props: dict[str, Any], scope: Scope, **extra: Any) -> M:
    """A model of the scope from a node's properties: the ones that are its fields, read as
    stored (``STORED``: a label stored before a rule refused its characters still reads)."""
    props = native(props)
    fields = {k: v for k, v in props.items() if k in model.model_fields and k != "scope"}
    return model.model_validate({"scope": scope, **fields, **extra}, context=STORED)
