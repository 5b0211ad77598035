"""MemoryStore on Neo4j (``graphmem.ports``).

Graph shape:
    (Episode)-[:DERIVED]->(Unit)-[:ABOUT {role}]->(Entity)
    (Episode)-[:DECIDED]->(Decision)-[:TARGET|PRODUCED]->(Unit)
    (Decision)-[:INVALIDATES {expired_at, invalid_at, reason, decision_id}]->(Unit)
    (:Episode:Undecided {place})    stored by a write whose commit has not decided it yet

Every node carries ``scope`` (the scope key) plus ``subject_type``/``subject_id``/``project_id``
so erasure is one indexed filter. Units are created once and never SET again: recall statistics
and archive state live on a Usage node beside the unit, and invalidation is an edge from the
decision that made it.
"""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

from neo4j import ManagedTransaction
from neo4j.time import DateTime

from graphmem.adapters.neo4j.driver import Embedding, Neo4jConnection, run
from graphmem.adapters.neo4j.lucene import lucene_phrases
from graphmem.adapters.neo4j.queries import load
from graphmem.domain.entries import MIN, Span, from_micros, micros, spans, unit_text
from graphmem.domain.mentions import Named, digest, edge_words, name_edges, named_in, runs_in
from graphmem.domain.models import (
    ERASED_KINDS,
    RECORD_KINDS,
    STORED,
    ApiKey,
    Appended,
    AsOf,
    AssembleTrace,
    Candidate,
    Decision,
    Deletion,
    Edge,
    Entity,
    Episode,
    Erasure,
    Fact,
    GroupUnit,
    Invalidation,
    MemoryBlock,
    MemoryKind,
    MemoryUnit,
    Model,
    NamesRead,
    Page,
    RecallStats,
    RecordKind,
    Relink,
    ReviewItem,
    Rewrite,
    Scope,
    SourceRef,
    StoredTrace,
    SubjectCounts,
    TemporalMeta,
    TextsRead,
    TimelineEvent,
    Triple,
    UnitEdges,
    UnitFilter,
    Usage,
    WriteBatch,
    entity_id,
    entity_ids,
    erasure_keys,
    fingerprint,
    new_id,
    normalise,
    utcnow,
    words,
)
from graphmem.errors import ConfigurationError, Conflict, IndexMismatch, NotFound, episodes_gone
from graphmem.ports import Record, each

#: Traces deleted per transaction when pruning: bounds one transaction's size.
TRACE_BATCH = 1_000
#: Entries read per page when names become known (every page is read: links must not depend
#: on the order texts arrived in).
TEXTS_PAGE = 10_000
#: Entity ids per known-names lookup.
NAME_IDS = 20_000


#: A model read from stored properties (``_fields``).
M = TypeVar("M", bound=Model)


def names_key(scope: Scope) -> str:
    """The key of the scope's names lock (``UnitStore.commit``; a commit takes it first)."""
    return "names:" + scope.key


def texts_changed(tx: ManagedTransaction, scopes: Iterable[Scope]) -> None:
    """Count a change to which texts a search finds made outside a commit, on each scope's
    names lock, held until ``tx`` ends (``TextsRead``; take it first, before other locks)."""
    rows = [{"key": names_key(s), "scope_props": scope_props(s)} for s in sorted(set(scopes), key=names_key)]
    if rows:
        run(tx, "mentions/texts_changed", rows=rows)


def scope_props(scope: Scope) -> dict[str, Any]:
    return {
        "scope": scope.key,
        "subject_type": scope.subject_type.value,
        "subject_id": scope.subject_id,
        "project_id": scope.project_id,
    }


def stored_datetime(value: Any) -> datetime:
    """``to_datetime`` of a time every stored record has (a creation or system time)."""
    time = to_datetime(value)
    if time is None:
        raise ValueError("a stored record without its system time")
    return time


def to_datetime(value: Any) -> datetime | None:
    """A time a query returned: a driver DateTime, or epoch microseconds (recall/unit_fields)."""
    if value is None:
        return None
    if isinstance(value, int):
        return from_micros(value)
    return value.to_native() if isinstance(value, DateTime) else value


def wire(value: datetime | None) -> str | None:
    """A time as write queries take it: ISO 8601 text that the server parses (``datetime()``).
    The driver converts each Python datetime in Python, at a cost that dominated large writes."""
    return value.isoformat() if value is not None else None


def unit_rows(units: Sequence[MemoryUnit]) -> dict[str, list[dict[str, Any]]]:
    """``store/create_units`` parameters: a row per unit, naming its subject and object
    entities by id, and each entity those name once (by id: they are merged in that order)."""
    entities: dict[str, dict[str, Any]] = {}
    rows = []
    for unit in units:
        row = unit_row(unit)
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
        rows.append({"props": row, "about": about})
    return {"rows": rows, "entities": [entities[eid] for eid in sorted(entities)]}


def unit_row(unit: MemoryUnit) -> dict[str, Any]:
    """A unit node's properties."""
    triple = unit.triple
    props = {
        **scope_props(unit.scope),
        "id": unit.id,
        "scope_token": unit.scope.token,
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
    return props


def entity_props(entity: Entity) -> dict[str, Any]:
    """An entity node's properties."""
    return named_props(entity.scope, entity.name, entity.norm, entity.created_at)


def named_props(scope: Scope, name: str, norm: str, created_at: datetime | None) -> dict[str, Any]:
    """The properties of an entity node with this name."""
    return {**scope_props(scope), "scope_token": scope.token, **name_props(name, norm), "created_at": wire(created_at)}


def name_props(name: str, norm: str) -> dict[str, Any]:
    """The properties of an entity node that derive from its name: ``words`` (how a question
    names it) and ``first``/``last`` (how a write's word runs find it: ``Neo4jStore.known_names``)."""
    said, first, last = _derived(name, norm)
    return {"name": name, "norm": norm, "words": list(said), "first": first, "last": last}


@lru_cache(maxsize=1 << 16)  # a write names the same entities in its units and its episodes
def _derived(name: str, norm: str) -> tuple[tuple[str, ...], str | None, str | None]:
    return tuple(words(name)), *(name_edges(norm) or (None, None))


def unit_from_row(row: dict[str, Any]) -> MemoryUnit:
    u = row["unit"]
    scope = Scope(subject_type=u["subject_type"], subject_id=u["subject_id"], project_id=u.get("project_id"))
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
        scope=scope,
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
            expired_at=to_datetime(row["expired_at"]),
            valid_at=to_datetime(u.get("valid_at")),
            invalid_at=to_datetime(row["invalid_at"]),
            last_recalled_at=to_datetime(u.get("last_recalled_at")),
            recall_count=u.get("recall_count") or 0,
        ),
        confidence=u["confidence"],
        labels=tuple(u.get("labels") or ()),
        triple=triple,
        group=u.get("group"),
    )


def group_unit(row: dict[str, Any]) -> GroupUnit:
    """A stored unit with its own end and all its edges (store/group_state, store/units_naming)."""
    unit = unit_from_row({"unit": row["unit"], "expired_at": None, "invalid_at": row["unit"].get("invalid_at")})
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
    return GroupUnit(unit=unit, edges=tuple(edges), archived=bool(row.get("archived")))


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


def event_props(event: TimelineEvent | None) -> dict[str, Any]:
    if event is None:
        return {}
    props = {f"ev_{k}": wire(getattr(event, k)) if k in _EVENT_TIMES else getattr(event, k) for k in _EVENT_FIELDS}
    props["ev_candidate"] = event.candidate.model_dump_json() if event.candidate else None
    return props


def event_from_props(props: dict[str, Any]) -> TimelineEvent | None:
    if props.get("ev_kind") is None:
        return None
    fields: dict[str, Any] = {k: props.get(f"ev_{k}") for k in _EVENT_FIELDS}
    raw = props.get("ev_candidate")
    return TimelineEvent(**fields, candidate=Candidate.model_validate_json(raw) if raw else None)


def decision_row(decision: Decision) -> dict[str, Any]:
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


def review_props(item: ReviewItem) -> dict[str, Any]:
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


def trace_params(trace: AssembleTrace, scores: Sequence[float | None]) -> dict[str, Any]:
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


def block_params(block: MemoryBlock) -> dict[str, Any]:
    """A block as ``blocks/put_block`` writes it."""
    props = {**scope_props(block.scope), **block.model_dump(exclude={"scope", "id"})}
    return {"scope": block.scope.key, "label": block.label, "id": block.id, "props": props}


def deletion_props(record: Deletion) -> dict[str, Any]:
    return {**scope_props(record.scope), **record.model_dump(exclude={"scope"})}


def invalidation_row(inv: Invalidation) -> dict[str, Any]:
    return {**inv.model_dump(), "expired_at": wire(inv.expired_at), "invalid_at": wire(inv.invalid_at)}


def mention_rows(scope: Scope, mentioned: dict[str, tuple[tuple[str, str], ...]]) -> dict[str, list[dict[str, Any]]]:
    """``mentions/*_mentions`` parameters: a row per owner with the entities it names by id,
    and each entity those name once (by id: they are merged in that order)."""
    ids: dict[str, str] = {}
    entities: dict[str, dict[str, Any]] = {}
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


def entry_row(
    unit_id: str,
    scope: Scope,
    kind: str,
    text: str,
    occurred: datetime | None,
    span: Span,
    vector: list[float] | None,
    archived: bool,
) -> dict[str, Any]:
    """One search entry of a unit (``graphmem.domain.entries``) as ``entries/create_entries`` writes it;
    ``occurred`` (its episode's time, else its world start) is what a question's time is near."""
    props = {
        **scope_props(scope),
        "unit_id": unit_id,
        "scope_token": scope.token,
        "kind": kind,
        "text": text,
        **span.props(),
    }
    props["occurred"] = micros(occurred, MIN) if occurred else props["t_from"]
    return {"props": props, "vector": Embedding(vector) if vector is not None else None, "archived": archived}


def unit_entries(
    unit: MemoryUnit, edges: Iterable[tuple[datetime, datetime | None]], vector: list[float] | None, archived: bool
) -> list[dict[str, Any]]:
    """Every search entry a stored unit has had, from its edges."""
    text = unit_text(unit.content, unit.summary)
    return [
        entry_row(unit.id, unit.scope, unit.kind.value, text, unit.source.occurred_at, span, vector, archived)
        for span in spans(unit.time.created_at, unit.time.valid_at, unit.time.invalid_at, edges)
    ]


@dataclass(frozen=True)
class _Shaped:
    """A batch's commit parameters, shaped outside its transaction (``Neo4jStore.stage``), and
    what they were shaped from: a copy of the batch with other records, names or texts (compared
    by identity) is shaped again."""

    source: tuple[Any, ...]
    units: dict[str, list[dict[str, Any]]]
    decisions: list[dict[str, Any]]
    invalidations: list[dict[str, Any]]
    guards: list[dict[str, Any]]
    #: The search entries of new units that no invalidation of the batch ends.
    entries: list[dict[str, Any]]
    #: Among ``texts_read``, the units and episodes naming ``anchors`` (``Neo4jStore._earlier``).
    earlier: tuple[Named, Named] | None

    @staticmethod
    def _source(batch: WriteBatch) -> tuple[Any, ...]:
        return (
            batch.units,
            batch.decisions,
            batch.invalidations,
            batch.vectors,
            batch.guards,
            batch.anchors,
            batch.texts_read,
        )

    @classmethod
    def of(cls, batch: WriteBatch) -> _Shaped:
        """The batch's parameters: those it was staged with while they fit it, else shaped now."""
        staged, source = batch.staged, cls._source(batch)
        if isinstance(staged, cls) and all(a is b for a, b in zip(staged.source, source)):
            return staged
        touched = {i.unit_id for i in batch.invalidations}
        read = batch.texts_read
        return cls(
            source=source,
            units=unit_rows(batch.units),
            decisions=[decision_row(d) for d in batch.decisions],
            invalidations=[invalidation_row(i) for i in batch.invalidations],
            guards=[{"group": g, "version": v} for g, v in sorted(batch.guards.items())],
            entries=[
                row
                for u in batch.units
                if u.id not in touched
                for row in unit_entries(u, [], batch.vectors.get(u.id), False)
            ],
            earlier=(named_in(batch.anchors, read.found), named_in(batch.anchors, read.episodes))
            if batch.anchors and read
            else None,
        )


def _layout(tx: ManagedTransaction, batch: WriteBatch) -> str | None:
    """The property the live entries keep their vectors in, read in the writing transaction;
    None before any index exists. A batch embedded with another model than the live one is
    refused, and so is any write while a rebuild switches models."""
    rows = run(tx, "index/get_model")
    if not rows:
        return None
    model = rows[0]
    if model["next_model"] is not None:
        raise ConfigurationError(
            f"an index rebuild to {model['next_model']} is in progress: "
            "writes wait until `graphmem index rebuild` finishes"
        )
    if batch.vectors and batch.vector_model not in (None, model["model"]):
        raise IndexMismatch(
            f"the index is built with {model['model']} but this write was embedded with "
            f"{batch.vector_model}: run `graphmem index rebuild`"
        )
    return vector_property(model["generation"])


def erasure_secret(conn: Neo4jConnection) -> bytes:
    """The database's erasure secret (a Setting node), created with 32 random bytes by the
    first caller: erasure records are keyed under it (``graphmem.domain.models.erasure_key``)."""
    return bytes.fromhex(conn.write("erase/secret", candidate=secrets.token_hex(32))[0]["value"])


def vector_property(generation: int) -> str:
    """Where entries of an embedding generation keep their vectors (one property a generation,
    so a rebuild with another model builds aside)."""
    return f"embedding_{generation}"


class Neo4jStore:
    """MemoryStore on a Neo4j database (see ``graphmem.ports.MemoryStore``)."""

    def __init__(self, conn: Neo4jConnection):
        self.conn = conn
        self._erasure_secret: bytes | None = None

    # -- episodes -------------------------------------------------------------------------
    def put_episodes(self, episodes: Sequence[Episode]) -> Appended:
        """Append episodes in one transaction under their (scope, id); those whose id their
        scope holds with other content are reported, not stored."""
        return self.conn.write_tx(lambda tx: self._put_episodes(tx, episodes, undecided=True), what="put episodes")

    @staticmethod
    def _put_episodes(tx: ManagedTransaction, episodes: Sequence[Episode], undecided: bool) -> Appended:
        rows, prints = [], []
        for e in episodes:
            facts = [f.model_dump(mode="json") for f in e.facts]
            prints.append(fingerprint(e.scope, e.occurred_at, e.raw, e.channel, facts))
            rows.append(
                {
                    "id": e.id,
                    "occurred_at": wire(e.occurred_at),
                    "props": {
                        **scope_props(e.scope),
                        "scope_token": e.scope.token,
                        "raw": e.raw,
                        "channel": e.channel,
                        "facts": json.dumps(facts),
                        "fingerprint": prints[-1],
                    },
                }
            )
        found = run(tx, "store/put_episodes", rows=rows, stored_at=wire(utcnow()), undecided=undecided)
        conflicts = tuple(r["position"] for r in found if r["fingerprint"] != prints[r["position"]])
        new = {(episodes[r["position"]].scope, episodes[r["position"]].id) for r in found if r["created"]}
        return Appended(new=len(new), conflicts=conflicts)

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        rows = self.conn.read("store/get_episode", id=episode_id, scope=scope.key)
        if not rows:
            return None
        return _episode(rows[0]["episode"], scope, rows[0]["derived_ids"])

    def processed_episodes(self, scope: Scope, ids: Iterable[str]) -> set[str]:
        rows = self.conn.read("store/processed_episodes", ids=list(ids), scope=scope.key)
        return {r["id"] for r in rows}

    def undecided_episodes(self, scope: Scope | None = None, limit: int = 100) -> list[list[Episode]]:
        rows = self.conn.read("store/undecided_episodes", scope=scope.key if scope else None, limit=limit)
        return [
            [
                _episode(
                    e, Scope(subject_type=e["subject_type"], subject_id=e["subject_id"], project_id=e["project_id"])
                )
                for e in r["episodes"]
            ]
            for r in rows
        ]

    def undecided_count(self, scopes: Sequence[Scope] | None = None) -> int:
        if scopes is None:
            return int(self.conn.read("store/undecided_total")[0]["n"])
        return int(self.conn.read("store/undecided_count", scopes=[s.key for s in scopes])[0]["n"])

    # -- writes ---------------------------------------------------------------------------
    def stage(self, batch: WriteBatch, scope: Scope) -> WriteBatch:
        shaped = _Shaped.of(batch)
        return batch if shaped is batch.staged else batch.model_copy(update={"staged": shaped})

    def commit(self, batch: WriteBatch, scope: Scope, relink: Relink | None = None) -> None:
        records: tuple[MemoryUnit | Decision | ReviewItem, ...] = (*batch.units, *batch.decisions, *batch.reviews)
        for record in records:
            if record.scope != scope:
                raise Conflict(f"{type(record).__name__} {record.id} is not in scope {scope}")
        batch_id = new_id()
        batch = self.stage(batch, scope)
        guards = batch.staged.guards

        def work(tx: ManagedTransaction) -> None:
            # A retried attempt after a lost acknowledgement finds its own commit key and stops.
            begun = run(tx, "store/begin_commit", id=batch_id, scope_props=scope_props(scope), committed_at=utcnow())
            if not begun[0]["fresh"]:
                return
            held = self._hold_names(tx, scope, batch, relink)  # first: the guards are read under it
            if guards:
                stale = run(tx, "store/check_guards", scope=scope.key, guards=guards)[0]["stale"]
                if stale:
                    raise Conflict(f"{stale} guarded group(s) changed since read; re-plan the write")
            self._apply(tx, scope, held)

        self.conn.write_tx(work, what="commit")

    @staticmethod
    def _hold_names(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, relink: Relink | None) -> WriteBatch:
        """The batch as its commit writes it once it holds the scope's names (``UnitStore.commit``,
        ``WriteBatch.held``), its names and texts counted: by the names it was planned with,
        which a later writer's plan may have included (``NamesRead.ahead``; drawn again, it
        makes known no more than those: names known only grow meanwhile, unless deleted), and
        by its new units' key (``TextsRead.ahead``)."""
        if batch.names_read is None and not batch.anchors and not batch.guards and not batch.changes_texts:
            return batch
        held = run(
            tx,
            "mentions/hold_names",
            key=names_key(scope),
            scope_props=scope_props(scope),
            made=bool(batch.anchors),
            last=digest(batch.anchors) if batch.anchors else None,
            texts=batch.changes_texts,
            texts_key=batch.texts_key,
        )[0]
        return batch.held(
            (held["version"], held["last"]),
            (held["texts"], held["texts_last"]),
            relink,
            lambda texts: Neo4jStore._known_names(tx, scope, texts),
        )

    @staticmethod
    def _apply(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, entries: bool = True) -> None:
        """The creating part of a commit: units, decisions, reviews, edges, unarchived units,
        and (unless the caller recomputes them) the search entries they change."""
        shaped = _Shaped.of(batch)
        units, decisions, invalidations = shaped.units, shaped.decisions, shaped.invalidations
        # Before any index exists there is no vector property: entries carry no vector then.
        prop = (_layout(tx, batch) or vector_property(1)) if entries else None
        touched = {i.unit_id for i in batch.invalidations}
        earlier = Neo4jStore._earlier(tx, scope, batch, shaped)  # before this batch's texts are searchable
        if units["rows"]:
            run(tx, "store/create_units", **units)
            if prop is not None and shaped.entries:
                run(tx, "entries/create_entries", rows=shaped.entries, prop=prop)
        if decisions:
            linked = run(tx, "store/create_decisions", rows=decisions, scope=scope.key)[0]
            if linked["gone"]:
                raise episodes_gone(linked["gone"], scope)
            if linked["missing"]:
                raise NotFound(f"{linked['missing']} decision(s) name a unit that is not in scope {scope}")
        for item in batch.reviews:
            run(tx, "review/put_review", props=review_props(item))
        if invalidations:
            written = run(tx, "store/create_invalidations", rows=invalidations, scope=scope.key)
            if written[0]["written"] != len(invalidations):
                raise NotFound(f"an invalidation names a unit or decision not in scope {scope}")
            if prop is not None:
                Neo4jStore._respan(tx, scope, sorted(touched), batch.vectors, prop)
        if batch.unarchive:
            run(tx, "store/unarchive", ids=list(batch.unarchive), scope=scope.key)
            run(tx, "entries/set_searchable", ids=list(batch.unarchive), scope=scope.key, searchable=True)
        if batch.decided:
            run(tx, "store/decided_episodes", ids=list(batch.decided), scope=scope.key)
        Neo4jStore._mention(tx, scope, batch, earlier)

    @staticmethod
    def _earlier(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, shaped: _Shaped) -> tuple[Named, Named]:
        """Stored units and episodes that name what the batch makes known, with those names:
        among the texts its plan found, when they stand (``WriteBatch.held``; ``_Shaped``), else
        as a search finds them now."""
        if not batch.anchors:
            return {}, {}
        if shaped.earlier is not None:
            return shaped.earlier
        read = Neo4jStore._texts_naming(tx, scope, batch.anchors)
        return named_in(batch.anchors, read.found), named_in(batch.anchors, read.episodes)

    @staticmethod
    def _texts_naming(
        tx: ManagedTransaction,
        scope: Scope,
        anchors: Sequence[tuple[str, bool]],
        version: int = 0,
        last: str | None = None,
    ) -> TextsRead:
        """The texts of the scope's units and episodes that hold the words of one of these
        names in order (a superset of those that name them): found by the text indexes, and
        read beside them for archived units, which left theirs. Searched first: a unit archived
        meanwhile is found by one of the two reads; one restored meanwhile counts as a change
        of the texts."""
        phrases = [words(name) for name, _ in anchors]
        found = Neo4jStore._searched(tx, "mentions/texts_naming", lucene_phrases(phrases, scope, "text"))
        found.update((r["id"], r["text"]) for r in run(tx, "mentions/archived_texts", scope=scope.key))
        episodes = Neo4jStore._searched(tx, "mentions/episodes_naming", lucene_phrases(phrases, scope, "raw"))
        return TextsRead(version=version, last=last, found=found, episodes=episodes)

    @staticmethod
    def _searched(tx: ManagedTransaction, query_name: str, queries: Sequence[str]) -> dict[str, str]:
        """Owner id -> text of every hit of the fulltext queries, page by page."""
        found: dict[str, str] = {}
        for query in queries:
            for skip in itertools.count(0, TEXTS_PAGE):
                page = run(tx, query_name, query=query, skip=skip, limit=TEXTS_PAGE)
                found.update((r["id"], r["text"]) for r in page)
                if len(page) < TEXTS_PAGE:
                    break
        return found

    def earlier_texts(self, scope: Scope, anchors: Sequence[tuple[str, bool]]) -> TextsRead:
        def work(tx: ManagedTransaction) -> TextsRead:
            row = run(tx, "mentions/texts_version", key=names_key(scope))[0]  # first: see UnitStore.earlier_texts
            return self._texts_naming(tx, scope, anchors, row["version"], row["last"])

        return self.conn.read_tx(work, what="earlier texts")

    @staticmethod
    def _mention(tx: ManagedTransaction, scope: Scope, batch: WriteBatch, earlier: tuple[Named, Named]) -> None:
        """Write the batch's mention links, and those of the ``earlier`` units and episodes."""
        at = utcnow()
        for query, mentioned in (
            ("mentions/unit_mentions", {**earlier[0], **batch.unit_mentions}),
            ("mentions/episode_mentions", {**earlier[1], **batch.episode_mentions}),
        ):
            rows = mention_rows(scope, mentioned)
            if rows["rows"]:
                run(tx, query, **rows, scope_props=scope_props(scope), at=at)

    def unit_entities(self, scope: Scope, unit_id: str) -> list[tuple[str, str]]:
        return [(r["name"], r["kind"]) for r in self.conn.read("mentions/unit_entities", scope=scope.key, id=unit_id)]

    def episode_entities(self, scope: Scope, episode_id: str) -> list[tuple[str, str]]:
        return [
            (r["name"], r["kind"]) for r in self.conn.read("mentions/episode_entities", scope=scope.key, id=episode_id)
        ]

    def known_names(self, scope: Scope, texts: Collection[str]) -> tuple[NamesRead, dict[str, bool]]:
        def work(tx: ManagedTransaction) -> tuple[NamesRead, dict[str, bool]]:
            row = run(tx, "mentions/names_version", key=names_key(scope))[0]  # first: see UnitStore.known_names
            return NamesRead(version=row["version"], last=row["last"]), Neo4jStore._known_names(tx, scope, texts)

        return self.conn.read_tx(work, what="known names")

    @staticmethod
    def _known_names(tx: ManagedTransaction, scope: Scope, texts: Collection[str]) -> dict[str, bool]:
        # Nearly every word run of a text is no name (97% of those of the facts of
        # benchmarks/graphiti): first the words that begin or end some name of the scope, then
        # only the runs that begin and end so, read and looked up by id (there, 6,500 index
        # seeks instead of 29,000, and a tenth of the runs read).
        asked = sorted({word for text in texts for word in edge_words(text)})
        firsts, lasts = set(), set()
        for start in range(0, len(asked), NAME_IDS):
            found = run(tx, "mentions/name_edges", scope=scope.key, words=asked[start : start + NAME_IDS])[0]
            firsts.update(found["firsts"])
            lasts.update(found["lasts"])
        ids = sorted(entity_ids(scope, runs_in(texts, (firsts, lasts))))
        return {
            r["name"]: r["fact"]
            for start in range(0, len(ids), NAME_IDS)
            for r in run(tx, "mentions/known_names", ids=ids[start : start + NAME_IDS])
        }

    def record_recall(self, scope: Scope, stats: Mapping[str, RecallStats]) -> int:
        rows = [
            {"id": uid, "at": s.recalled_at, "n": s.increment, "archive": False, "archived_at": None}
            for uid, s in stats.items()
        ]
        return int(self.conn.write("store/note_usage", rows=rows, scope_props=scope_props(scope))[0]["updated"])

    # -- reads ----------------------------------------------------------------------------
    def get_unit(self, unit_id: str, scope: Scope, at: AsOf | None = None) -> MemoryUnit | None:
        flt = UnitFilter(ids=(unit_id,), include_expired=at is None)
        found = self.list_units(scope, flt, Page(limit=1), at)
        return found[0] if found else None

    def list_units(
        self, scope: Scope, flt: UnitFilter, page: Page = Page(), at: AsOf | None = None
    ) -> list[MemoryUnit]:
        at = at or AsOf.now()
        rows = self.conn.read(
            "store/list_units",
            scope=scope.key,
            ids=list(flt.ids) if flt.ids is not None else None,
            hashes=list(flt.content_hashes) if flt.content_hashes is not None else None,
            slots=list(flt.slots) if flt.slots is not None else None,
            kind=flt.kind.value if flt.kind else None,
            labels=list(flt.labels),
            include_expired=flt.include_expired,
            valid=at.valid,
            known=at.known,
            offset=page.offset,
            limit=page.limit,
        )
        return [unit_from_row(r) for r in rows]

    def invalidations(self, unit_id: str, scope: Scope) -> UnitEdges:
        rows = self.conn.read("audit/invalidations", id=unit_id, scope=scope.key)
        return UnitEdges.model_validate(_native(rows[0])) if rows else UnitEdges()

    # -- review queue and episode listing --------------------------------------------------
    def list_reviews(
        self, scope: Scope | None = None, status: str | None = "pending", limit: int = 100
    ) -> list[ReviewItem]:
        rows = self.conn.read("review/list_reviews", scope=scope.key if scope else None, status=status, limit=limit)
        return [_review(r["review"]) for r in rows]

    def get_review(self, review_id: str) -> ReviewItem | None:
        rows = self.conn.read("review/get_review", id=review_id)
        return _review(rows[0]["review"]) if rows else None

    def decide_review(self, review_id: str, status: str, note: str | None = None) -> bool:
        return bool(
            self.conn.write("review/decide_review", id=review_id, status=status, decided_at=utcnow(), note=note)
        )

    def list_episode_ids(self, scope: Scope, page: Page = Page()) -> list[str]:
        rows = self.conn.read("store/list_episodes", scope=scope.key, offset=page.offset, limit=page.limit)
        return [r["id"] for r in rows]

    # -- archive --------------------------------------------------------------------------
    def set_archived(self, scope: Scope, unit_ids: list[str], archived_at: datetime | None) -> int:
        """Archive (or restore, with None) units: their usage records it and their search
        entries leave (or rejoin) search, in one transaction."""

        def work(tx: ManagedTransaction) -> int:
            texts_changed(tx, [scope])
            rows = run(
                tx,
                "store/note_usage",
                scope_props=scope_props(scope),
                rows=[{"id": uid, "at": None, "n": 0, "archive": True, "archived_at": archived_at} for uid in unit_ids],
            )
            run(tx, "entries/set_searchable", ids=unit_ids, scope=scope.key, searchable=archived_at is None)
            return rows[0]["updated"] if rows else 0

        return self.conn.write_tx(work, what="archive")

    def archived_ids(self, scope: Scope) -> set[str]:
        return {r["id"] for r in self.conn.read("store/archived_ids", scope=scope.key)}

    def list_scopes(self) -> list[Scope]:
        return [Scope(**r) for r in self.conn.read("store/list_scopes")]

    # -- erasure and episode deletion -----------------------------------------------------
    def erase_batch(
        self, erasure_id: str, subject_type: str, subject_id: str, project_id: str | None, batch: int
    ) -> Erasure:
        """Delete up to ``batch`` nodes of each kind belonging to the subject and add the counts
        to the erasure record, in one transaction; the record after it."""

        def work(tx: ManagedTransaction) -> Erasure:
            counts = run(
                tx,
                "erase/erase_batch",
                subject_type=subject_type,
                subject_id=subject_id,
                project_id=project_id,
                batch=batch,
            )[0]
            record = run(tx, "erase/count_erasure", id=erasure_id, counts=counts, at=utcnow())[0]["record"]
            return Erasure.model_validate(_native(record))

        return self.conn.write_tx(work, what="erase batch")

    def start_erasure(
        self, subject_type: str, subject_id: str, project_id: str | None, actor: str | None = None
    ) -> Erasure:
        subject_key, project_key = erasure_keys(self._secret(), subject_type, subject_id, project_id)
        row = self.conn.write(
            "erase/start_erasure",
            subject_type=subject_type,
            subject_key=subject_key,
            project_key=project_key,
            at=utcnow(),
            id=new_id(),
            actor=actor,
        )[0]
        return Erasure.model_validate(_native(row["record"]))

    def erased(self, scope: Scope) -> bool:
        return bool(self.conn.read("erase/erased", **self._erasure_keys(scope), kinds=list(ERASED_KINDS))[0]["erased"])

    def last_erasure(self, scope: Scope) -> datetime | None:
        at = self.conn.read("erase/last_erasure", **self._erasure_keys(scope))[0]["at"]
        return at.to_native() if at is not None else None

    def _erasure_keys(self, scope: Scope) -> dict[str, Any]:
        """The keys erasure records of the scope are found by: its subject's, and its project's
        or every project's (key "")."""
        subject_key, project_key = erasure_keys(
            self._secret(), scope.subject_type.value, scope.subject_id, scope.project_id
        )
        return {"subject_key": subject_key, "project_keys": sorted({"", project_key})}

    def _secret(self) -> bytes:
        """The database's erasure secret, made by the first store that asks."""
        if self._erasure_secret is None:
            self._erasure_secret = erasure_secret(self.conn)
        return self._erasure_secret

    def delete_episode(self, episode_id: str, scope: Scope, rewrite: Rewrite, deletion: Deletion) -> Deletion | None:
        """Delete an episode, its units and decisions, and apply the timeline ``rewrite`` that
        re-derives what they changed, in one transaction; None when not in the scope."""
        add = self.stage(rewrite.add, scope)

        def work(tx: ManagedTransaction) -> Deletion | None:
            texts_changed(tx, [scope])
            rows = run(tx, "store/delete_episode", id=episode_id, scope=scope.key)
            if not rows:
                return None
            if rewrite.drop_edges:
                run(
                    tx,
                    "store/drop_edges",
                    scope=scope.key,
                    edges=[{"unit_id": u, "decision_id": d, "expired_at": at} for u, d, at in rewrite.drop_edges],
                )
            named = set(rows[0]["entities"])
            if rewrite.drop_units:
                named |= set(run(tx, "store/drop_units", scope=scope.key, ids=list(rewrite.drop_units))[0]["entities"])
            record = deletion.model_copy(
                update={"units": rows[0]["units"] + len(rewrite.drop_units), "decisions": rows[0]["decisions"]}
            )
            run(tx, "store/put_deletion", props=deletion_props(record))
            self._apply(tx, scope, add, entries=False)
            prop = _layout(tx, add) or vector_property(1)
            self._respan(tx, scope, [*rewrite.respan, *(u.id for u in add.units)], add.vectors, prop)
            if named:
                run(tx, "mentions/forget_orphans", ids=sorted(named))
            return record

        return self.conn.write_tx(work, what="delete episode")

    @staticmethod
    def _respan(
        tx: ManagedTransaction, scope: Scope, ids: Sequence[str], vectors: dict[str, list[float]], prop: str
    ) -> None:
        """Recompute the search entries of these units from what is stored now (their edges
        changed), keeping each unit's vector: entries are always ``graphmem.domain.entries.spans`` of
        a unit and its edges."""
        ids = sorted(set(ids))  # a unit named twice (re-derived and re-added) must get its entries once
        if not ids:
            return
        kept = {r["id"]: r["vector"] for r in run(tx, "entries/unit_vectors", ids=ids, prop=prop)}
        records = [group_unit(r) for r in run(tx, "store/unit_records", scope=scope.key, ids=ids)]
        run(tx, "entries/delete_entries", ids=ids)
        entries = [
            row
            for g in records
            for row in unit_entries(
                g.unit,
                [(e.expired_at, e.invalid_at) for e in g.edges],
                vectors.get(g.unit.id) or kept.get(g.unit.id),
                g.archived,
            )
        ]
        if entries:
            run(tx, "entries/create_entries", rows=entries, prop=prop)

    # -- timelines ------------------------------------------------------------------------
    def group_state(self, scope: Scope, groups: Sequence[str]) -> tuple[list[Decision], list[GroupUnit]]:
        if not groups:
            return [], []
        row = self.conn.read("store/group_state", scope=scope.key, groups=sorted(set(groups)))[0]
        events = sorted((_decision(d, scope) for d in row["events"]), key=lambda d: (d.decided_at, d.id))
        return events, [group_unit(u) for u in row["units"]]

    def episode_groups(self, scope: Scope, episode_id: str) -> set[str]:
        rows = self.conn.read("store/episode_groups", scope=scope.key, id=episode_id)
        return set(rows[0]["groups"]) if rows else set()

    def episode_events(self, scope: Scope, episode_ids: Sequence[str]) -> list[Decision]:
        rows = self.conn.read("store/episode_events", scope=scope.key, ids=list(episode_ids))
        return [_decision(r["decision"], scope) for r in rows]

    def units_naming(self, scope: Scope, entity: str) -> list[GroupUnit]:
        rows = self.conn.read("store/units_naming", scope=scope.key, entity_id=entity_id(scope, entity))
        return [group_unit(r) for r in rows]

    def unit_records(self, scope: Scope, ids: Sequence[str]) -> list[GroupUnit]:
        rows = self.conn.read("store/unit_records", scope=scope.key, ids=list(dict.fromkeys(ids)))
        return [group_unit(r) for r in rows]

    # -- audit ----------------------------------------------------------------------------
    def list_decisions(
        self,
        scope: Scope,
        episode_id: str | None = None,
        op: str | None = None,
        unit_id: str | None = None,
        limit: int = 100,
        unit_ids: Sequence[str] | None = None,
    ) -> list[Decision]:
        if unit_id is not None or unit_ids is not None:
            ids = sorted({i for i in (unit_id, *(unit_ids or ())) if i is not None})
            rows = self.conn.read("audit/unit_decisions", scope=scope.key, unit_ids=ids)
            found = [_decision(r["decision"], scope) for r in rows]
            return [
                d
                for d in found
                if (episode_id is None or d.episode_id == episode_id) and (op is None or d.op.value == op)
            ][:limit]
        rows = self.conn.read("audit/list_decisions", scope=scope.key, episode_id=episode_id, op=op, limit=limit)
        return [_decision(r["decision"], scope) for r in rows]

    def put_trace(self, trace: AssembleTrace, scores: Sequence[float] = ()) -> None:
        self.conn.write("audit/put_traces", rows=[trace_params(trace, scores)], scope=trace.scope.key)

    def get_trace(self, trace_id: str, scope: Scope) -> AssembleTrace | None:
        rows = self.conn.read("audit/get_trace", id=trace_id, scope=scope.key)
        if not rows:
            return None
        t = _native(rows[0]["trace"])
        fields = {k: t[k] for k in ("id", "query", "resident_ids", "recalled_ids", "tokens", "created_at")}
        fields["rule_ids"] = t.get("rule_ids") or ()
        return AssembleTrace(scope=scope, **fields)

    # -- API keys (graphmem.ports.KeyStore) --------------------------------------------------
    def put_key(self, key: ApiKey) -> None:
        self.conn.write("keys/put_key", props={**key.model_dump(), "subjects": list(key.subjects)})

    def get_key(self, key_id: str) -> ApiKey | None:
        rows = self.conn.read("keys/get_key", id=key_id)
        return ApiKey.model_validate(_native(rows[0]["key"])) if rows else None

    def list_keys(self) -> list[ApiKey]:
        return [ApiKey.model_validate(_native(r["key"])) for r in self.conn.read("keys/list_keys")]

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        rows = self.conn.write("keys/revoke_key", id=key_id, at=at)
        return ApiKey.model_validate(_native(rows[0]["key"])) if rows else None

    def drop_key_subject(self, subject: str, at: datetime) -> list[ApiKey]:
        return [
            ApiKey.model_validate(_native(r["key"]))
            for r in self.conn.write("keys/drop_subject", subject=subject, at=at)
        ]

    # -- blocks ---------------------------------------------------------------------------
    def put_block(self, block: MemoryBlock) -> None:
        self.conn.write("blocks/put_block", **block_params(block))

    def list_blocks(self, scope: Scope, label: str | None = None) -> list[MemoryBlock]:
        rows = self.conn.read(
            "blocks/list_blocks",
            scope=scope.key,
            subject_type=scope.subject_type.value,
            subject_id=scope.subject_id,
            label=label,
        )
        return [_fields(MemoryBlock, r["block"], scope) for r in rows]

    def get_block(self, scope: Scope, label: str) -> MemoryBlock | None:
        found = self.list_blocks(scope, label)
        return found[0] if found else None

    def delete_block(self, scope: Scope, label: str) -> bool:
        return bool(self.conn.write("blocks/delete_block", scope=scope.key, label=label)[0]["deleted"] > 0)

    # -- whole subjects: listing, export and import, retention ---------------------------
    def subjects(self) -> list[SubjectCounts]:
        rows = self.conn.read("store/subjects")
        return [
            SubjectCounts(
                scope=Scope(subject_type=r["subject_type"], subject_id=r["subject_id"], project_id=r["project_id"]),
                episodes=r["episodes"],
                units=r["units"],
                decisions=r["decisions"],
            )
            for r in rows
        ]

    def _records(
        self, scope: Scope, kind: RecordKind, ids: Sequence[str] | None, after: str, limit: int
    ) -> list[dict[str, Any]]:
        label, key = _NODES[kind]
        query = load("exchange/records").rendered(label=label, key=key)
        return self.conn.read(
            query,
            scope=scope.key,
            subject_type=scope.subject_type.value,
            subject_id=scope.subject_id,
            ids=ids,
            own=kind in _OWN_KEYS,
            after=after,
            limit=limit,
        )

    def dump(
        self, scope: Scope, kind: RecordKind, after: str = "", limit: int = 1000
    ) -> tuple[list[Record], str | None]:
        rows = self._records(scope, kind, None, after, limit)
        page = [record for row in rows for record in _record(kind, row, scope)]
        return page, rows[-1]["key"] if len(rows) == limit else None

    def lookup(self, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
        if not keys:
            return [], set()
        rows = self._records(scope, kind, list(keys), "", len(keys))
        return (
            [record for row in rows if row["mine"] for record in _record(kind, row, scope)],
            {row["key"] for row in rows if not row["mine"]},
        )

    def load(
        self, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch | None = None
    ) -> int:
        derived = derived or WriteBatch()

        def work(tx: ManagedTransaction) -> None:
            if records.keys() & {"episode", "unit", "usage"}:  # new texts, archived ones
                texts_changed(tx, [scope])
            for kind in RECORD_KINDS:
                if records.get(kind):
                    self._load(tx, scope, kind, records[kind], derived, "unit" in records)

        self.conn.write_tx(work, what=f"import {' and '.join(k for k in RECORD_KINDS if records.get(k))} records")
        return sum(map(len, records.values()))

    def _load(
        self,
        tx: ManagedTransaction,
        scope: Scope,
        kind: RecordKind,
        records: Sequence[Record],
        derived: WriteBatch,
        with_units: bool,
    ) -> None:
        """One kind of ``load``; ``derived`` is written with the units, else with the episodes."""
        if kind == "episode":
            self._put_episodes(tx, each(Episode, records), undecided=False)  # they come with their decisions
            if not with_units:
                self._apply(tx, scope, derived)  # the entities they name
        elif kind == "unit":
            self._apply(tx, scope, derived.model_copy(update={"units": tuple(each(MemoryUnit, records))}))
        elif kind == "invalidation":
            self._apply(
                tx, scope, WriteBatch(invalidations=tuple(each(Invalidation, records)), vectors=derived.vectors)
            )
        elif kind == "decision":
            # A decision may name a unit that is gone (deleted with its episode): its link
            # is left out here as it was where the decision comes from.
            run(tx, "store/create_decisions", rows=[decision_row(d) for d in each(Decision, records)], scope=scope.key)
        elif kind == "entity":
            run(
                tx,
                "exchange/put_entities",
                rows=[{"id": e.id, "props": entity_props(e)} for e in each(Entity, records)],
            )
        elif kind == "usage":
            usage = each(Usage, records)
            rows = [u.model_dump(exclude={"scope"}) for u in usage]
            run(tx, "exchange/put_usage", rows=rows, scope_props=scope_props(scope))
            archived = [u.unit_id for u in usage if u.archived_at is not None]
            run(tx, "entries/set_searchable", ids=archived, scope=scope.key, searchable=False)
        elif kind == "trace":
            run(
                tx,
                "audit/put_traces",
                rows=[trace_params(t, t.scores) for t in each(StoredTrace, records)],
                scope=scope.key,
            )
        else:
            # Deletions, blocks and review items: a subject holds few of them.
            if kind == "deletion":
                for deletion in each(Deletion, records):
                    run(tx, "store/put_deletion", props=deletion_props(deletion))
            elif kind == "block":
                for block in each(MemoryBlock, records):
                    run(tx, "blocks/put_block", **block_params(block))
            else:
                for review in each(ReviewItem, records):
                    run(tx, "review/put_review", props=review_props(review))

    def prune_traces(self, scope: Scope | None, before: datetime, dry_run: bool = False) -> int:
        key = scope.key if scope else None
        if dry_run:
            return int(self.conn.read("audit/count_traces", scope=key, before=before)[0]["traces"])
        pruned = 0
        while deleted := self.conn.write("audit/prune_traces", scope=key, before=before, batch=TRACE_BATCH)[0][
            "deleted"
        ]:
            pruned += deleted
        return pruned


#: The node each record kind is read from (``exchange/records``), and its key property.
#: Record kinds whose keys belong to their subject: another subject may hold the same one.
_OWN_KEYS = frozenset({"episode"})
_NODES: dict[str, tuple[str, str]] = {
    "episode": ("Episode", "id"),
    "entity": ("Entity", "id"),
    "unit": ("Unit", "id"),
    "deletion": ("Deletion", "id"),
    "decision": ("Decision", "id"),
    "invalidation": ("Decision", "id"),
    "usage": ("Usage", "unit_id"),
    "block": ("Block", "id"),
    "review": ("Review", "id"),
    "trace": ("Trace", "id"),
}


def _record(kind: RecordKind, row: dict[str, Any], scope: Scope) -> list[Record]:
    """The records of one ``exchange/records`` row: one, or a decision's edges."""
    props = row["record"]
    if kind == "invalidation":
        edges = [Invalidation(decision_id=row["key"], **_native(e)) for e in row["edges"]]
        edges.sort(key=lambda e: (e.unit_id, e.expired_at))
        return [*edges]
    if kind == "unit":
        return [unit_from_row({"unit": props, "expired_at": None, "invalid_at": props.get("invalid_at")})]
    if kind == "decision":
        return [_decision(props, scope)]
    if kind == "episode":
        return [_episode(props, scope)]
    if kind == "review":
        return [_review(props)]
    if kind == "trace":
        ranked = dict(row["scores"])
        return [
            _fields(
                StoredTrace, props, scope, scores=tuple(ranked.get(rank) for rank in range(len(props["recalled_ids"])))
            )
        ]
    models: dict[str, type[Entity | Deletion | Usage | MemoryBlock]]
    models = {"entity": Entity, "deletion": Deletion, "usage": Usage, "block": MemoryBlock}
    model = models[kind]
    return [_fields(model, props, scope)]


def _native(value: Any) -> Any:
    """Driver temporal values to Python datetimes, recursively."""
    if isinstance(value, dict):
        return {k: _native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_native(v) for v in value]
    return to_datetime(value) if isinstance(value, DateTime) else value


def _fields(model: type[M], props: dict[str, Any], scope: Scope, **extra: Any) -> M:
    """A model of the scope from a node's properties: the ones that are its fields, read as
    stored (``STORED``: a label stored before a rule refused its characters still reads)."""
    props = _native(props)
    fields = {k: v for k, v in props.items() if k in model.model_fields and k != "scope"}
    return model.model_validate({"scope": scope, **fields, **extra}, context=STORED)


def _episode(props: dict[str, Any], scope: Scope, derived_ids: Sequence[str] = ()) -> Episode:
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


def _review(props: dict[str, Any]) -> ReviewItem:
    p = _native(props)
    scope = Scope(subject_type=p["subject_type"], subject_id=p["subject_id"], project_id=p.get("project_id"))
    fields = {
        k: p.get(k)
        for k in ("id", "episode_id", "extractor_version", "reason", "status", "created_at", "decided_at", "note")
    }
    return ReviewItem(scope=scope, candidate=Candidate.model_validate_json(p["candidate"]), **fields)


def _decision(props: dict[str, Any], scope: Scope) -> Decision:
    return _fields(Decision, props, scope, event=event_from_props(_native(props)))
