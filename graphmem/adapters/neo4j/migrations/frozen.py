"""Frozen copies of the live helpers the data migrations 0011-0019 use, as they were on
2026-12-04 (main at 7a73af3): a migration must keep meaning what it meant when released, so
it never calls the store, the write pipeline or the policy, which keep changing.

Never edit this module. A later migration that needs a helper as it is then copies its own
beside it. What stays shared is the domain (models, scope keys, entity ids, fingerprints,
tokenising): pure functions of stored fields that the live code finds records by; changing one
comes with a migration that recomputes every stored value from its fields, after these.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction
from neo4j.time import DateTime

from graphmem.adapters.neo4j.driver import run
from graphmem.domain.entries import from_micros
from graphmem.domain.mentions import edge_words, name_edges, runs_in
from graphmem.domain.models import Candidate, MemoryKind, Scope, TimelineEvent, entity_id, entity_ids, normalise, words

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

#: graphmem.policy.PolicyConfig.single_valued: predicates holding one object per subject.
SINGLE_VALUED = frozenset({"lives_in", "works_at", "reports_to", "name", "married_to", "age", "job_title", "plays_for"})


def to_datetime(value: Any) -> datetime | None:
    """graphmem.adapters.neo4j.rows.to_datetime: a driver DateTime or epoch microseconds."""
    if value is None:
        return None
    if isinstance(value, int):
        return from_micros(value)
    return value.to_native() if isinstance(value, DateTime) else value


def stored_datetime(value: Any) -> datetime:
    """graphmem.adapters.neo4j.rows.stored_datetime: a time every stored record has."""
    time = to_datetime(value)
    if time is None:
        raise ValueError("a stored record without its system time")
    return time


def wire(value: datetime | None) -> str | None:
    """graphmem.adapters.neo4j.rows.wire: a time as ISO 8601 text."""
    return value.isoformat() if value is not None else None


def group_of(c: Candidate, single: bool) -> tuple[str, str]:
    """graphmem.pipelines.write.group_of: (timeline group, value) of a candidate."""
    if c.triple is not None and single:
        return "slot:" + c.triple.slot(c.scope), normalise(c.triple.object or "")
    if c.triple is not None:
        t = c.triple
        key = f"{c.scope.key}\x1f{normalise(t.subject)}\x1f{normalise(t.predicate)}\x1f{normalise(t.object or '')}"
        return "fact:" + hashlib.sha256(key.encode()).hexdigest()[:32], normalise(t.object or "")
    key = f"{c.scope.key}\x1f{c.kind.value}\x1f{c.content_hash}"
    if c.kind is MemoryKind.episodic and c.valid_at is not None:
        key += f"\x1f{c.valid_at.isoformat()}"
    return "text:" + hashlib.sha256(key.encode()).hexdigest()[:32], c.content_hash


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
_EVENT_TIMES = ("order_at", "valid_at", "end", "occurred_at")


def event_props(event: TimelineEvent) -> dict[str, Any]:
    """graphmem.adapters.neo4j.rows.event_props: a decision's event as ``ev_*`` properties."""
    props = {f"ev_{k}": wire(getattr(event, k)) if k in _EVENT_TIMES else getattr(event, k) for k in _EVENT_FIELDS}
    props["ev_candidate"] = event.candidate.model_dump_json() if event.candidate else None
    return props


def erasure_secret(conn: Neo4jConnection) -> bytes:
    """graphmem.adapters.neo4j.erasure.erasure_secret: the database's, made by the first caller."""
    return bytes.fromhex(conn.write("erase/secret", candidate=secrets.token_hex(32))[0]["value"])


def scope_props(scope: Scope) -> dict[str, Any]:
    """graphmem.adapters.neo4j.rows.scope_props."""
    return {
        "scope": scope.key,
        "subject_type": scope.subject_type.value,
        "subject_id": scope.subject_id,
        "project_id": scope.project_id,
    }


def name_props(name: str, norm: str) -> dict[str, Any]:
    """graphmem.adapters.neo4j.rows.name_props: an entity's properties derived from its name."""
    first, last = name_edges(norm) or (None, None)
    return {"name": name, "norm": norm, "words": list(words(name)), "first": first, "last": last}


def mention_rows(scope: Scope, mentioned: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, list[dict[str, Any]]]:
    """graphmem.adapters.neo4j.rows.mention_rows: ``mentions/*_mentions`` parameters."""
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


def known_names(conn: Neo4jConnection, scope: Scope, texts: Collection[str]) -> dict[str, bool]:
    """graphmem.adapters.neo4j.names.known_names_in: the scope's names the texts hold."""
    return conn.read_tx(lambda tx: _known_names(tx, scope, texts), what="known names")


def _known_names(tx: ManagedTransaction, scope: Scope, texts: Collection[str]) -> dict[str, bool]:
    batch = 20_000
    asked = sorted({word for text in texts for word in edge_words(text)})
    firsts, lasts = set(), set()
    for start in range(0, len(asked), batch):
        found = run(tx, "mentions/name_edges", scope=scope.key, words=asked[start : start + batch])[0]
        firsts.update(found["firsts"])
        lasts.update(found["lasts"])
    ids = sorted(entity_ids(scope, runs_in(texts, (firsts, lasts))))
    return {
        r["name"]: r["fact"]
        for start in range(0, len(ids), batch)
        for r in run(tx, "mentions/known_names", ids=ids[start : start + batch])
    }
