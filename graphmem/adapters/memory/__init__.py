"""In-memory MemoryStore for fast unit tests. It passes the same contract suite as Neo4jStore
(``tests/contract``), so pipelines tested on it behave the same on Neo4j."""

from __future__ import annotations

import math
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from typing import Any

from graphmem.domain.entries import MAX, MIN, micros, near, nearness, spans, unit_text, world_range
from graphmem.domain.fusion import rrf, similar, together, walk
from graphmem.domain.mentions import digest, named_in, names_in
from graphmem.domain.models import (
    RECORD_KINDS,
    ApiKey,
    Appended,
    AsOf,
    AssembleTrace,
    Decision,
    Deletion,
    Edge,
    Entity,
    Episode,
    Erasure,
    GroupUnit,
    Hit,
    InvalidatedBy,
    Invalidation,
    MemoryBlock,
    MemoryUnit,
    NamesRead,
    Page,
    Reached,
    RecallStats,
    RecordKind,
    Relink,
    ReviewItem,
    Rewrite,
    Scope,
    Scored,
    SearchRequest,
    Step,
    StoredTrace,
    SubjectCounts,
    Superseded,
    TemporalMeta,
    TextsRead,
    UnitEdges,
    UnitFilter,
    Usage,
    WriteBatch,
    entity_id,
    erasure_keys,
    new_id,
    normalise,
    terms,
    utcnow,
    words,
)
from graphmem.errors import Conflict, NotFound, episodes_gone
from graphmem.ports import Embedder, Record, each


def _earliest(*values: datetime | None) -> datetime | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


@dataclass
class _State:
    #: (scope key, episode id) -> episode: an id belongs to its scope.
    episodes: dict[tuple[str, str], Episode] = field(default_factory=dict)
    units: dict[str, MemoryUnit] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    edges: list[Invalidation] = field(default_factory=list)
    traces: dict[str, AssembleTrace] = field(default_factory=dict)
    #: trace id -> the score of each recalled unit, by rank.
    trace_scores: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    blocks: dict[tuple[str, str], MemoryBlock] = field(default_factory=dict)
    #: unit id -> (last recalled at, recall count): kept beside units, never on them.
    usage: dict[str, tuple[datetime, int]] = field(default_factory=dict)
    deletions: dict[str, Deletion] = field(default_factory=dict)
    #: The embedding of each unit's content (its search entries are derived from the unit and
    #: its edges when searched, so they are always what the store says).
    vectors: dict[str, list[float]] = field(default_factory=dict)
    #: The entities each unit and episode names (a unit by its id, an episode by its scope key
    #: and id, as ``episodes``: ids are the caller's): entity norm -> (name, kind).
    unit_mentions: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    episode_mentions: dict[tuple[str, str], dict[str, tuple[str, str]]] = field(default_factory=dict)
    #: scope -> (names version, digest of the last names made known): ``UnitStore.known_names``.
    names: dict[Scope, tuple[int, str | None]] = field(default_factory=dict)
    #: scope -> (texts version, key of the last commit that changed the texts): ``earlier_texts``.
    texts: dict[Scope, tuple[int, str | None]] = field(default_factory=dict)
    #: (scope key, episode id) -> (the write that stored it, its place there), while undecided.
    undecided: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    writes: int = 0  # calls of put_episodes so far


class InMemoryStore:
    """MemoryStore in process memory (see ``graphmem.ports.MemoryStore``)."""

    def __init__(self) -> None:
        self._state = _State()
        self._lock = threading.RLock()
        #: Erasure records by id, keyed by HMACs under this store's own secret.
        self._erasures: dict[str, Erasure] = {}
        self._secret = secrets.token_bytes(32)
        #: unit id -> when it was archived.
        self._archived: dict[str, datetime] = {}
        self._reviews: dict[str, ReviewItem] = {}
        self._keys: dict[str, ApiKey] = {}

    def put_episodes(self, episodes: Sequence[Episode]) -> Appended:
        return self._append(episodes, undecided=True)

    def _append(self, episodes: Sequence[Episode], undecided: bool) -> Appended:
        with self._lock:
            new, conflicts = 0, []
            self._state.writes += 1
            for position, episode in enumerate(episodes):
                key = (episode.scope.key, episode.id)
                existing = self._state.episodes.get(key)
                if existing is None:
                    self._state.episodes[key] = episode.model_copy(update={"derived_ids": ()})
                    if undecided:
                        self._state.undecided[key] = (self._state.writes, position)
                    new += 1
                elif existing.fingerprint != episode.fingerprint:
                    conflicts.append(position)
            return Appended(new=new, conflicts=tuple(conflicts))

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        with self._lock:
            episode = self._state.episodes.get((scope.key, episode_id))
            if episode is None:
                return None
            derived = sorted(
                (u for u in self._state.units.values() if u.source.episode_id == episode_id and u.scope == scope),
                key=lambda u: (u.time.created_at, u.id),
            )
            return episode.model_copy(update={"derived_ids": tuple(u.id for u in derived)})

    def processed_episodes(self, scope: Scope, ids: Iterable[str]) -> set[str]:
        with self._lock:
            decided = {d.episode_id for d in self._state.decisions.values() if d.scope == scope}
            return {i for i in ids if i in decided}

    def undecided_episodes(self, scope: Scope | None = None, limit: int = 100) -> list[list[Episode]]:
        with self._lock:
            found = sorted(
                (at, key) for key, at in self._state.undecided.items() if scope is None or key[0] == scope.key
            )
            writes: dict[int, list[Episode]] = {}
            for (write, _), key in found:
                writes.setdefault(write, []).append(self._state.episodes[key])
            return list(writes.values())[:limit]

    def undecided_count(self, scopes: Sequence[Scope] | None = None) -> int:
        keys = None if scopes is None else {s.key for s in scopes}
        with self._lock:
            return sum(1 for scope_key, _ in self._state.undecided if keys is None or scope_key in keys)

    def stage(self, batch: WriteBatch, scope: Scope) -> WriteBatch:
        return batch  # nothing to shape: a commit here is a copy under a lock

    def commit(self, batch: WriteBatch, scope: Scope, relink: Relink | None = None) -> None:
        with self._lock:
            state = self._state
            records: tuple[MemoryUnit | Decision | ReviewItem, ...] = (*batch.units, *batch.decisions, *batch.reviews)
            for record in records:
                if record.scope != scope:
                    raise Conflict(f"{type(record).__name__} {record.id} is not in scope {scope}")
            logs = Counter(d.event.group for d in state.decisions.values() if d.scope == scope and d.event)
            stale = [g for g, v in batch.guards.items() if logs[g] != v]
            if stale:
                raise Conflict(f"{len(stale)} guarded group(s) changed since read; re-plan the write")
            new_units = {u.id: u for u in batch.units}
            if any(uid in state.units for uid in new_units) or len(new_units) != len(batch.units):
                raise Conflict("a unit with that id already exists; units are written once")
            in_scope = {uid for uid, u in state.units.items() if u.scope == scope} | set(new_units)
            for d in batch.decisions:
                for uid in (d.target_id, d.produced_id):
                    if uid is not None and uid not in in_scope:
                        raise NotFound(f"decision {d.id} names unit {uid}, not in scope {scope}")
            gone = {
                d.episode_id
                for d in batch.decisions
                if d.episode_id is not None and (scope.key, d.episode_id) not in state.episodes
            }
            if gone:
                raise episodes_gone(len(gone), scope)
            decisions = {d.id for d in batch.decisions} | {
                did for did, d in state.decisions.items() if d.scope == scope
            }
            for inv in batch.invalidations:
                if inv.unit_id not in in_scope or inv.decision_id not in decisions:
                    raise NotFound(f"an invalidation names a unit or decision not in scope {scope}")
            # All checks passed: apply everything at once.
            batch = self._hold_names(scope, batch, relink)
            state.units.update(new_units)
            self._name_entities(batch.units)
            state.vectors.update({uid: v for uid, v in batch.vectors.items() if uid in new_units})
            state.decisions.update({d.id: d for d in batch.decisions})
            state.edges.extend(batch.invalidations)
            self._reviews.update({r.id: r for r in batch.reviews})
            for eid in batch.decided:
                state.undecided.pop((scope.key, eid), None)
            for uid in batch.unarchive:
                self._archived.pop(uid, None)
            self._mention(scope, batch)

    def _hold_names(self, scope: Scope, batch: WriteBatch, relink: Relink | None) -> WriteBatch:
        """The batch with its mention links drawn again when another writer made names known
        since (``UnitStore.commit``; the store's lock is held through the commit), its names
        counted by those it was planned with (as ``Neo4jStore`` counts them)."""
        names, texts = self._state.names.get(scope, (0, None)), self._state.texts.get(scope, (0, None))
        if batch.anchors:
            self._state.names[scope] = (names[0] + 1, digest(batch.anchors))
        if batch.changes_texts:
            self._state.texts[scope] = (texts[0] + 1, batch.texts_key)
        return batch.held(names, texts, relink, lambda texts: self.known_names(scope, texts)[1])

    def _texts_changed(self, scope: Scope) -> None:
        """A change to which texts ``earlier_texts`` finds made outside a commit (as
        ``Neo4jStore`` counts it)."""
        version, _ = self._state.texts.get(scope, (0, None))
        self._state.texts[scope] = (version + 1, None)

    def earlier_texts(self, scope: Scope, anchors: Sequence[tuple[str, bool]]) -> TextsRead:
        with self._lock:
            version, last = self._state.texts.get(scope, (0, None))
            units, episodes = self._texts(scope)
        return TextsRead(
            version=version,
            last=last,
            found={uid: units[uid] for uid in named_in(anchors, units)},
            episodes={eid: episodes[eid] for eid in named_in(anchors, episodes)},
        )

    def _texts(self, scope: Scope) -> tuple[dict[str, str], dict[str, str]]:
        """The texts of the scope's units and of its episodes, by id: what a name may link."""
        state = self._state
        return (
            {u.id: unit_text(u.content, u.summary) for u in state.units.values() if u.scope == scope},
            {e.id: e.raw for e in state.episodes.values() if e.scope == scope},
        )

    def _mention(self, scope: Scope, batch: WriteBatch) -> None:
        """The batch's mention links, and those of earlier units and episodes that name what it
        makes known."""
        state = self._state
        tables: tuple[tuple[dict[Any, dict[str, tuple[str, str]]], Callable[[str], Any]], ...] = (
            (state.unit_mentions, lambda owner: owner),
            (state.episode_mentions, lambda owner: (scope.key, owner)),
        )
        for (owners, key), mentioned in zip(tables, (batch.unit_mentions, batch.episode_mentions)):
            for owner, names in mentioned.items():
                owners.setdefault(key(owner), {}).update({normalise(n): (n, kind) for n, kind in names})
        if batch.anchors:  # earlier units and episodes that name what is now known are linked too
            read = batch.texts_read
            units, episodes = (read.found, read.episodes) if read else self._texts(scope)
            stored = ({u for u in units if u in state.units}, {e for e in episodes if (scope.key, e) in state.episodes})
            for (owners, key), texts, present, new in zip(
                tables, (units, episodes), stored, (batch.unit_mentions, batch.episode_mentions)
            ):
                for owner, names in named_in(batch.anchors, texts).items():
                    if owner in present and owner not in new:
                        for name, kind in names:
                            owners.setdefault(key(owner), {}).setdefault(normalise(name), (name, kind))

    def record_recall(self, scope: Scope, stats: Mapping[str, RecallStats]) -> int:
        with self._lock:
            units = self._state.units
            found = [uid for uid in stats if uid in units and units[uid].scope == scope]
            for uid in found:
                patch = stats[uid]
                last, count = self._state.usage.get(uid, (patch.recalled_at, 0))
                self._state.usage[uid] = (max(last, patch.recalled_at), count + patch.increment)
            return len(found)

    def get_unit(self, unit_id: str, scope: Scope, at: AsOf | None = None) -> MemoryUnit | None:
        found = self.list_units(scope, UnitFilter(ids=(unit_id,), include_expired=at is None), Page(limit=1), at)
        return found[0] if found else None

    def list_units(
        self, scope: Scope, flt: UnitFilter, page: Page = Page(), at: AsOf | None = None
    ) -> list[MemoryUnit]:
        at = at or AsOf.now()
        with self._lock:
            seen = []
            for unit in self._matching(scope, flt):
                edges = self._known_edges(unit.id, at)
                if not flt.include_expired and not self._visible(unit, edges, at):
                    continue
                last, count = self._state.usage.get(unit.id, (None, 0))
                time: TemporalMeta = unit.time.model_copy(
                    update={
                        "expired_at": _earliest(*(e.expired_at for e in edges)),
                        "invalid_at": _earliest(unit.time.invalid_at, *(e.invalid_at for e in edges)),
                        "last_recalled_at": last,
                        "recall_count": count,
                    }
                )
                seen.append(unit.model_copy(update={"time": time}))
        seen.sort(key=lambda u: (u.time.created_at, u.id))
        return seen[page.offset : page.offset + page.limit]

    def invalidations(self, unit_id: str, scope: Scope) -> UnitEdges:
        with self._lock:
            decisions = self._state.decisions
            incoming = [
                InvalidatedBy(
                    decision_id=e.decision_id,
                    op=decisions[e.decision_id].op,
                    produced_id=decisions[e.decision_id].produced_id,
                    expired_at=e.expired_at,
                    invalid_at=e.invalid_at,
                    reason=e.reason,
                )
                for e in self._state.edges
                if e.unit_id == unit_id and decisions[e.decision_id].scope == scope
            ]
            producers = {d.id for d in decisions.values() if d.produced_id == unit_id and d.scope == scope}
            outgoing = [
                Superseded(
                    unit_id=e.unit_id,
                    content=self._state.units[e.unit_id].content,
                    expired_at=e.expired_at,
                    invalid_at=e.invalid_at,
                    reason=e.reason,
                )
                for e in self._state.edges
                if e.decision_id in producers and e.unit_id in self._state.units
            ]
            return UnitEdges(incoming=tuple(incoming), outgoing=tuple(outgoing))

    # -- review queue and episode listing --------------------------------------------------
    def list_reviews(
        self, scope: Scope | None = None, status: str | None = "pending", limit: int = 100
    ) -> list[ReviewItem]:
        with self._lock:
            found = [
                r
                for r in self._reviews.values()
                if (scope is None or r.scope == scope) and (status is None or r.status == status)
            ]
        return sorted(found, key=lambda r: (r.created_at, r.id))[:limit]

    def get_review(self, review_id: str) -> ReviewItem | None:
        return self._reviews.get(review_id)

    def decide_review(self, review_id: str, status: str, note: str | None = None) -> bool:
        with self._lock:
            item = self._reviews.get(review_id)
            if item is None or item.status != "pending":
                return False
            self._reviews[review_id] = item.model_copy(update={"status": status, "decided_at": utcnow(), "note": note})
            return True

    def list_episode_ids(self, scope: Scope, page: Page = Page()) -> list[str]:
        with self._lock:
            eps = sorted(
                (e for e in self._state.episodes.values() if e.scope == scope), key=lambda e: (e.occurred_at, e.id)
            )
        return [e.id for e in eps][page.offset : page.offset + page.limit]

    # -- archive --------------------------------------------------------------------------
    def set_archived(self, scope: Scope, unit_ids: list[str], archived_at: datetime | None) -> int:
        with self._lock:
            self._texts_changed(scope)
            ids = [i for i in unit_ids if i in self._state.units and self._state.units[i].scope == scope]
            for uid in ids:
                if archived_at is None:
                    self._archived.pop(uid, None)
                else:
                    self._archived[uid] = archived_at
            return len(ids)

    def archived_ids(self, scope: Scope) -> set[str]:
        with self._lock:
            return {i for i in self._archived if i in self._state.units and self._state.units[i].scope == scope}

    def list_scopes(self) -> list[Scope]:
        with self._lock:
            return sorted({u.scope for u in self._state.units.values()}, key=lambda s: s.key)

    # -- erasure and episode deletion -----------------------------------------------------
    def erase_batch(
        self, erasure_id: str, subject_type: str, subject_id: str, project_id: str | None, batch: int
    ) -> Erasure:
        def mine(scope: Scope) -> bool:
            return (scope.subject_type.value, scope.subject_id) == (subject_type, subject_id) and (
                project_id is None or scope.project_id == project_id
            )

        with self._lock:
            st = self._state
            counts: dict[str, int] = {}
            tables: tuple[tuple[str, dict[Any, Any]], ...] = (
                ("units", st.units),
                ("episodes", st.episodes),
                ("decisions", st.decisions),
                ("traces", st.traces),
                ("entities", st.entities),
            )
            for name, table in tables:
                doomed = [k for k, v in table.items() if mine(v.scope)][:batch]
                for k in doomed:
                    del table[k]
                counts[name] = len(doomed)
            for scope in [s for s in st.names if mine(s)]:
                del st.names[scope]
            blocks = [k for k, b in st.blocks.items() if mine(b.scope)][:batch]
            for k in blocks:
                del st.blocks[k]
            counts["blocks"] = len(blocks)
            reviews = [k for k, r in self._reviews.items() if mine(r.scope)][:batch]
            for k in reviews:
                del self._reviews[k]
            counts["reviews"] = len(reviews)
            orphans: tuple[tuple[dict[Any, Any], Collection[Any]], ...] = (
                (st.vectors, st.units),
                (self._archived, st.units),
                (st.unit_mentions, st.units),
                (st.episode_mentions, st.episodes),
                (st.undecided, st.episodes),
            )
            for table, kept in orphans:
                for k in [k for k in table if k not in kept]:
                    del table[k]
            for k in [k for k in st.trace_scores if k not in st.traces]:
                del st.trace_scores[k]
            usage = [k for k in st.usage if k not in st.units][:batch]
            for k in usage:
                del st.usage[k]
            counts["usage"] = len(usage)
            deletions = [k for k, d in st.deletions.items() if mine(d.scope)][:batch]
            for k in deletions:
                del st.deletions[k]
            counts["deletions"] = len(deletions)
            st.edges = [e for e in st.edges if e.unit_id in st.units and e.decision_id in st.decisions]
            record = self._erasures[erasure_id]
            record = self._erasures[erasure_id] = record.model_copy(
                update={
                    **{kind: getattr(record, kind) + n for kind, n in counts.items()},
                    "status": "running" if any(counts.values()) else "done",
                    "updated_at": utcnow(),
                }
            )
            return record

    def start_erasure(
        self, subject_type: str, subject_id: str, project_id: str | None, actor: str | None = None
    ) -> Erasure:
        subject_key, project_key = erasure_keys(self._secret, subject_type, subject_id, project_id)
        with self._lock:
            running = [
                r
                for r in self._erasures.values()
                if (r.subject_hash, r.project_hash, r.status) == (subject_key, project_key, "running")
            ]
            record = (
                running[0]
                if running
                else Erasure(
                    id=new_id(),
                    subject_type=subject_type,
                    status="running",
                    subject_hash=subject_key,
                    project_hash=project_key,
                    actor=actor,
                    key="hmac-sha256",
                    started_at=utcnow(),
                )
            )
            self._erasures[record.id] = record
            return record

    def erased(self, scope: Scope) -> bool:
        return any(r.status != "done" or any(r.counts.values()) for r in self._erasures_of(scope))

    def last_erasure(self, scope: Scope) -> datetime | None:
        return max((t for r in self._erasures_of(scope) if (t := r.updated_at or r.started_at)), default=None)

    def _erasures_of(self, scope: Scope) -> list[Erasure]:
        """The erasure records of the scope: of its subject with every project, or of its project."""
        subject_key, project_key = erasure_keys(
            self._secret, scope.subject_type.value, scope.subject_id, scope.project_id
        )
        with self._lock:
            return [
                r
                for r in self._erasures.values()
                if r.subject_hash == subject_key and r.project_hash in ("", project_key)
            ]

    # -- API keys (graphmem.ports.KeyStore) --------------------------------------------------
    def put_key(self, key: ApiKey) -> None:
        with self._lock:
            if key.id in self._keys:
                raise Conflict(f"key {key.id} already exists")
            self._keys[key.id] = key

    def get_key(self, key_id: str) -> ApiKey | None:
        with self._lock:
            return self._keys.get(key_id)

    def list_keys(self) -> list[ApiKey]:
        with self._lock:
            return sorted(self._keys.values(), key=lambda k: (k.created_at, k.id))

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        with self._lock:
            key = self._keys.get(key_id)
            if key is not None and key.revoked_at is None:
                key = self._keys[key_id] = key.model_copy(update={"revoked_at": at})
            return key

    def drop_key_subject(self, subject: str, at: datetime) -> list[ApiKey]:
        with self._lock:
            changed = []
            for key in [k for k in self._keys.values() if subject in k.subjects]:
                left = tuple(s for s in key.subjects if s != subject)
                emptied = not left and not key.admin
                changed.append(
                    key.model_copy(
                        update={
                            "subjects": left,
                            "revoked_at": key.revoked_at or (at if emptied else None),
                            "name": None if emptied else key.name,
                        }
                    )
                )
                self._keys[key.id] = changed[-1]
            return changed

    def delete_episode(self, episode_id: str, scope: Scope, rewrite: Rewrite, deletion: Deletion) -> Deletion | None:
        with self._lock:
            st = self._state
            if (scope.key, episode_id) not in st.episodes:
                return None
            self._texts_changed(scope)
            units = {k for k, u in st.units.items() if u.source.episode_id == episode_id and u.scope == scope}
            units |= set(rewrite.drop_units)
            decisions = {k for k, d in st.decisions.items() if d.episode_id == episode_id and d.scope == scope}
            dropped = set(rewrite.drop_edges)
            st.edges = [
                e
                for e in st.edges
                if e.decision_id not in decisions
                and e.unit_id not in units
                and (e.unit_id, e.decision_id, e.expired_at) not in dropped
            ]
            for k in units:
                del st.units[k]
                st.usage.pop(k, None)
                st.vectors.pop(k, None)
                st.unit_mentions.pop(k, None)
                self._archived.pop(k, None)
            st.episode_mentions.pop((scope.key, episode_id), None)
            for k in decisions:
                del st.decisions[k]
            del st.episodes[(scope.key, episode_id)]
            st.undecided.pop((scope.key, episode_id), None)
            record = deletion.model_copy(update={"units": len(units), "decisions": len(decisions)})
            st.deletions[record.id] = record
        self.commit(rewrite.add, scope)
        with self._lock:  # links of the scope's texts that held only by what the deleted texts made known go
            facts, seen = set(map(normalise, self._facts(scope))), set(map(normalise, self._seen(scope)))
            texts = {k for k, u in st.units.items() if u.scope == scope} | {
                k for k, e in st.episodes.items() if e.scope == scope
            }
            tables: tuple[dict[Any, dict[str, tuple[str, str]]], ...] = (st.unit_mentions, st.episode_mentions)
            for table in tables:
                for owner in (names for k, names in table.items() if k in texts):
                    for norm in [
                        k
                        for k, (_, kind) in owner.items()
                        if (kind == "fact" and k not in facts) or (kind == "known" and k not in seen)
                    ]:
                        del owner[norm]
        return record

    def _facts(self, scope: Scope) -> set[str]:
        """Names of the entities the scope's facts are about."""
        return {
            n
            for u in self._state.units.values()
            if u.scope == scope and u.triple
            for n in (u.triple.subject, u.triple.object)
            if n
        }

    def _seen(self, scope: Scope) -> set[str]:
        """Names a text of the scope writes as a proper name or a speaker."""
        st = self._state
        owners: list[tuple[MemoryUnit | Episode | None, dict[str, tuple[str, str]]]] = [
            (st.units.get(k), names) for k, names in st.unit_mentions.items()
        ]
        owners += [(st.episodes.get(k), names) for k, names in st.episode_mentions.items()]
        return {
            name
            for thing, names in owners
            if thing is not None and thing.scope == scope
            for name, kind in names.values()
            if kind in ("proper", "speaker")
        }

    def known_names(self, scope: Scope, texts: Collection[str]) -> tuple[NamesRead, dict[str, bool]]:
        with self._lock:
            version, last = self._state.names.get(scope, (0, None))
            facts, seen = self._facts(scope), self._seen(scope)
        known = {**dict.fromkeys(seen, False), **dict.fromkeys(facts, True)}
        return NamesRead(version=version, last=last), names_in(texts, known)

    def episode_entities(self, scope: Scope, episode_id: str) -> list[tuple[str, str]]:
        with self._lock:
            if (scope.key, episode_id) not in self._state.episodes:
                return []
            return sorted(self._state.episode_mentions.get((scope.key, episode_id), {}).values())

    def unit_entities(self, scope: Scope, unit_id: str) -> list[tuple[str, str]]:
        with self._lock:
            unit = self._state.units.get(unit_id)
            if unit is None or unit.scope != scope:
                return []
            about = (
                [(unit.triple.subject, "subject")]
                + ([(unit.triple.object, "object")] if unit.triple and unit.triple.object else [])
                if unit.triple
                else []
            )
            named = list(self._state.unit_mentions.get(unit_id, {}).values())
        return sorted(about + named)

    def named(self, unit: MemoryUnit) -> dict[str, str]:
        """The entities a unit is about or names: norm -> name."""
        found = {normalise(n): n for n in ((unit.triple.subject, unit.triple.object) if unit.triple else ()) if n}
        for norm, (name, _) in self._state.unit_mentions.get(unit.id, {}).items():
            found.setdefault(norm, name)
        return found

    # -- timelines ------------------------------------------------------------------------
    def group_state(self, scope: Scope, groups: Sequence[str]) -> tuple[list[Decision], list[GroupUnit]]:
        wanted = set(groups)
        with self._lock:
            events = [
                d
                for d in self._state.decisions.values()
                if d.scope == scope and d.event is not None and d.event.group in wanted
            ]
            units = [u for u in self._state.units.values() if u.scope == scope and u.group in wanted]
            return sorted(events, key=lambda d: (d.decided_at, d.id)), [self._with_edges(u) for u in units]

    def episode_groups(self, scope: Scope, episode_id: str) -> set[str]:
        with self._lock:
            st = self._state
            found = {
                d.event.group
                for d in st.decisions.values()
                if d.scope == scope and d.episode_id == episode_id and d.event is not None
            }
            return found | {
                u.group for u in st.units.values() if u.scope == scope and u.source.episode_id == episode_id and u.group
            }

    def episode_events(self, scope: Scope, episode_ids: Sequence[str]) -> list[Decision]:
        wanted = set(episode_ids)
        with self._lock:
            found = [
                d
                for d in self._state.decisions.values()
                if d.scope == scope and d.episode_id in wanted and d.event is not None
            ]
        return sorted(found, key=lambda d: (d.decided_at, d.id))

    def units_naming(self, scope: Scope, entity: str) -> list[GroupUnit]:
        eid = entity_id(scope, entity)
        with self._lock:
            units = [
                u
                for u in self._state.units.values()
                if u.scope == scope
                and u.triple
                and eid in {entity_id(scope, n) for n in (u.triple.subject, u.triple.object) if n}
            ]
            return [self._with_edges(u) for u in units]

    def unit_records(self, scope: Scope, ids: Sequence[str]) -> list[GroupUnit]:
        with self._lock:
            units = [self._state.units.get(uid) for uid in dict.fromkeys(ids)]
            return [self._with_edges(u) for u in units if u is not None and u.scope == scope]

    def _with_edges(self, unit: MemoryUnit) -> GroupUnit:
        decisions = self._state.decisions
        edges = sorted(
            (
                Edge(
                    expired_at=e.expired_at,
                    invalid_at=e.invalid_at,
                    decision_id=e.decision_id,
                    episode_id=decisions[e.decision_id].episode_id,
                )
                for e in self._state.edges
                if e.unit_id == unit.id
            ),
            key=lambda e: (e.expired_at, e.decision_id),
        )
        last, count = self._state.usage.get(unit.id, (None, 0))
        time = unit.time.model_copy(update={"last_recalled_at": last, "recall_count": count})
        return GroupUnit(
            unit=unit.model_copy(update={"time": time}), edges=tuple(edges), archived=unit.id in self._archived
        )

    # -- audit and blocks -----------------------------------------------------------------
    def list_decisions(
        self,
        scope: Scope,
        episode_id: str | None = None,
        op: str | None = None,
        unit_id: str | None = None,
        limit: int = 100,
        unit_ids: Sequence[str] | None = None,
    ) -> list[Decision]:
        wanted = None if unit_id is None and unit_ids is None else {unit_id, *(unit_ids or ())} - {None}
        with self._lock:
            hit_units = {e.decision_id for e in self._state.edges if wanted is not None and e.unit_id in wanted}
            found = [
                d
                for d in self._state.decisions.values()
                if d.scope == scope
                and (episode_id is None or d.episode_id == episode_id)
                and (op is None or d.op.value == op)
                and (wanted is None or d.target_id in wanted or d.produced_id in wanted or d.id in hit_units)
            ]
        found.sort(key=lambda d: (-d.decided_at.timestamp(), d.id))
        return found[:limit]

    def put_trace(self, trace: AssembleTrace, scores: Sequence[float] = ()) -> None:
        with self._lock:
            self._state.traces[trace.id] = trace
            self._state.trace_scores[trace.id] = tuple(
                scores[rank] if rank < len(scores) else None for rank in range(len(trace.recalled_ids))
            )

    def get_trace(self, trace_id: str, scope: Scope) -> AssembleTrace | None:
        trace = self._state.traces.get(trace_id)
        return trace if trace is not None and trace.scope == scope else None

    def put_block(self, block: MemoryBlock) -> None:
        with self._lock:
            existing = self._state.blocks.get((block.scope.key, block.label))
            keep_id = {"id": existing.id} if existing else {}
            self._state.blocks[(block.scope.key, block.label)] = block.model_copy(update=keep_id)

    def list_blocks(self, scope: Scope, label: str | None = None) -> list[MemoryBlock]:
        with self._lock:
            found = [b for (k, held), b in self._state.blocks.items() if k == scope.key and label in (None, held)]
        return sorted(found, key=lambda b: b.label)

    def get_block(self, scope: Scope, label: str) -> MemoryBlock | None:
        return self._state.blocks.get((scope.key, label))

    def delete_block(self, scope: Scope, label: str) -> bool:
        with self._lock:
            return self._state.blocks.pop((scope.key, label), None) is not None

    # -- whole subjects: listing, export and import, retention ---------------------------
    def subjects(self) -> list[SubjectCounts]:
        with self._lock:
            st = self._state
            counts: dict[Scope, dict[str, int]] = {}
            for name, table in (("episodes", st.episodes), ("units", st.units), ("decisions", st.decisions)):
                for record in table.values():
                    mine = counts.setdefault(record.scope, {"episodes": 0, "units": 0, "decisions": 0})
                    mine[name] += 1
        # The order Neo4j gives: by type, id, then project with no project last.
        order = sorted(
            counts, key=lambda s: (s.subject_type.value, s.subject_id, s.project_id is None, s.project_id or "")
        )
        return [SubjectCounts(scope=scope, **counts[scope]) for scope in order]

    def _records(self, kind: RecordKind) -> list[tuple[str, Scope, Record]]:
        """Every stored record of one kind as (key, scope, record), as ``dump`` gives them."""
        st = self._state
        if kind == "invalidation":
            return [(e.decision_id, st.decisions[e.decision_id].scope, e) for e in st.edges]
        if kind == "usage":
            return [
                (uid, st.units[uid].scope, self._usage(uid))
                for uid in set(st.usage) | set(self._archived)
                if uid in st.units
            ]
        if kind == "trace":
            return [
                (t.id, t.scope, StoredTrace(**dict(t), scores=st.trace_scores.get(t.id, ())))
                for t in st.traces.values()
            ]
        tables: dict[str, Mapping[Any, Episode | Entity | MemoryUnit | Deletion | Decision | MemoryBlock | ReviewItem]]
        tables = {
            "episode": st.episodes,
            "entity": st.entities,
            "unit": st.units,
            "deletion": st.deletions,
            "decision": st.decisions,
            "block": st.blocks,
            "review": self._reviews,
        }
        return [(r.id, r.scope, r) for r in tables[kind].values()]

    def _usage(self, unit_id: str) -> Usage:
        last, count = self._state.usage.get(unit_id, (None, 0))
        return Usage(
            unit_id=unit_id,
            scope=self._state.units[unit_id].scope,
            recall_count=count,
            last_recalled_at=last,
            archived_at=self._archived.get(unit_id),
        )

    @staticmethod
    def _order(kind: RecordKind, records: Iterable[Record]) -> list[Record]:
        """Edges by unit and time, as Neo4j gives a decision's; other records as they come."""
        records = list(records)
        if kind == "invalidation":
            edges = sorted(each(Invalidation, records), key=lambda e: (e.unit_id, e.expired_at))
            return [*edges]
        return records

    def dump(
        self, scope: Scope, kind: RecordKind, after: str = "", limit: int = 1000
    ) -> tuple[list[Record], str | None]:
        with self._lock:
            mine = sorted(((k, r) for k, s, r in self._records(kind) if s == scope and k > after), key=lambda x: x[0])
        keys = [(k, [r for _, r in group]) for k, group in groupby(mine, key=lambda x: x[0])][:limit]
        page = [r for _, group in keys for r in self._order(kind, group)]
        return page, keys[-1][0] if len(keys) == limit else None

    def lookup(self, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
        wanted = set(keys)
        with self._lock:
            found = [(k, s, r) for k, s, r in self._records(kind) if k in wanted]
        return (
            self._order(kind, (r for _, s, r in found if s == scope)),
            set() if kind == "episode" else {k for k, s, _ in found if s != scope},
        )

    def load(
        self, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch | None = None
    ) -> int:
        derived = derived or WriteBatch()
        with self._lock:
            st = self._state
            if records.keys() & {"episode", "unit", "usage"}:  # new texts, archived ones
                self._texts_changed(scope)
            if records.get("episode"):
                self._append(each(Episode, records["episode"]), undecided=False)
            for kind in RECORD_KINDS:
                rows = records.get(kind, ()) if kind != "episode" else ()
                if kind == "invalidation":
                    st.edges.extend(each(Invalidation, rows))
                elif kind == "usage":
                    for usage in each(Usage, rows):
                        if usage.last_recalled_at is not None:
                            st.usage[usage.unit_id] = (usage.last_recalled_at, usage.recall_count)
                        if usage.archived_at:
                            self._archived[usage.unit_id] = usage.archived_at
                elif kind == "trace":
                    for trace in each(StoredTrace, rows):
                        st.traces[trace.id] = AssembleTrace(**{k: v for k, v in trace if k != "scores"})
                        st.trace_scores[trace.id] = trace.scores
                elif kind == "block":
                    for block in each(MemoryBlock, rows):
                        st.blocks[(block.scope.key, block.label)] = block
                elif kind == "review":
                    self._reviews.update((r.id, r) for r in each(ReviewItem, rows))
                elif kind == "entity":
                    st.entities.update((e.id, e) for e in each(Entity, rows))
                elif kind == "unit":
                    st.units.update((u.id, u) for u in each(MemoryUnit, rows))
                elif kind == "deletion":
                    st.deletions.update((d.id, d) for d in each(Deletion, rows))
                elif kind == "decision":
                    st.decisions.update((d.id, d) for d in each(Decision, rows))
            units = each(MemoryUnit, records.get("unit", ()))
            self._name_entities(units)
            st.vectors.update({u.id: derived.vectors[u.id] for u in units if u.id in derived.vectors})
            self._mention(scope, derived)
            return sum(map(len, records.values()))

    def prune_traces(self, scope: Scope | None, before: datetime, dry_run: bool = False) -> int:
        with self._lock:
            st = self._state
            old = [t.id for t in st.traces.values() if (scope is None or t.scope == scope) and t.created_at < before]
            if not dry_run:
                for tid in old:
                    del st.traces[tid]
                    st.trace_scores.pop(tid, None)
            return len(old)

    def _name_entities(self, units: Iterable[MemoryUnit]) -> None:
        """The entities units name that are not stored yet, named as the first unit writes them."""
        for u in units:
            for name in (u.triple.subject, u.triple.object) if u.triple else ():
                if name:
                    eid = entity_id(u.scope, name)
                    self._state.entities.setdefault(
                        eid,
                        Entity(id=eid, scope=u.scope, name=name, norm=normalise(name), created_at=u.time.created_at),
                    )

    # -- helpers --------------------------------------------------------------------------
    def _matching(self, scope: Scope, flt: UnitFilter) -> list[MemoryUnit]:
        def ok(u: MemoryUnit) -> bool:
            return (
                u.scope == scope
                and (flt.ids is None or u.id in flt.ids)
                and (flt.content_hashes is None or u.content_hash in flt.content_hashes)
                and (flt.slots is None or (u.triple is not None and u.triple.slot(scope) in flt.slots))
                and (flt.kind is None or u.kind == flt.kind)
                and all(label in u.labels for label in flt.labels)
            )

        return [u for u in self._state.units.values() if ok(u)]

    def _known_edges(self, unit_id: str, at: AsOf) -> list[Invalidation]:
        """The invalidation edges of a unit already written at ``at.known``."""
        return [e for e in self._state.edges if e.unit_id == unit_id and e.expired_at <= at.known]

    @staticmethod
    def _visible(unit: MemoryUnit, edges: list[Invalidation], at: AsOf) -> bool:
        t = unit.time
        return (
            t.created_at <= at.known
            and (t.valid_at is None or t.valid_at <= at.valid)
            and (t.invalid_at is None or at.valid < t.invalid_at)
            and not any(e.invalid_at is None or e.invalid_at <= at.valid for e in edges)
        )


class InMemoryIndex:
    """MemoryIndex over an ``InMemoryStore``: exact cosine and a plain BM25 over the units
    visible at the request's (T, S), per the same rule the store lists them by."""

    def __init__(self, store: InMemoryStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embedder.embed(list(texts))

    def _visible(self, request: SearchRequest) -> list[MemoryUnit]:
        """Units of the request's scopes and kinds, not archived, with an entry live at its
        system time whose world interval meets its world range; each as that entry shows it."""
        lo, hi = world_range(request.at, request.during)
        known = micros(request.at.known, MIN)
        state = self.store._state
        edges: dict[str, list[tuple[datetime, datetime | None]]] = {}
        for e in state.edges:
            edges.setdefault(e.unit_id, []).append((e.expired_at, e.invalid_at))
        found = []
        for u in state.units.values():
            if (
                u.scope not in request.scopes
                or u.id in self.store._archived
                or (request.kinds and u.kind not in request.kinds)
            ):
                continue
            for span in spans(u.time.created_at, u.time.valid_at, u.time.invalid_at, edges.get(u.id, ())):
                p = span.props()
                if p["s_from"] <= known < p["s_to"] and p["t_from"] < hi and p["t_to"] > lo:
                    time = u.time.model_copy(update={"invalid_at": span.t_to, "expired_at": span.expired_at})
                    found.append(u.model_copy(update={"time": time}))
        return found

    def _cosine(self, vector: Sequence[float], units: Sequence[MemoryUnit]) -> list[Hit]:
        vectors = self.store._state.vectors
        return [Hit(id=u.id, score=_cosine(vector, vectors[u.id])) for u in units if u.id in vectors]

    def recall(self, request: SearchRequest) -> list[Scored]:
        units = self._visible(request)
        by_id = {u.id: u for u in units}
        vector, asked = request.asked(self._speaking(request))
        lists: dict[str, list[Hit]] = {}
        if vector is not None:
            lists["semantic"] = _top(self._cosine(vector, units), request.fetch)
        if asked:
            scores = bm25(sorted(set(asked)), [(u.id, terms(u.content)) for u in units])
            lists["lexical"] = _top([Hit(id=i, score=v) for i, v in scores.items()], request.fetch)
        if request.words:
            lists["entities"] = self._about(request, units)
        if request.window and vector is not None:
            lists["time"] = self._near(request, request.window, units, vector)
        if request.words:
            lists["speaker"] = self._said(request, lists)
        fused = rrf(lists, request.rrf_k, request.weights)
        vectors = self.store._state.vectors

        def similarity(ids: Sequence[str]) -> dict[str, float]:
            return {} if vector is None else {i: _cosine(vector, vectors[i]) for i in ids if i in vectors}

        best = [
            Scored(unit=by_id[i], score=score, similarity=sim) for i, score, sim in similar(fused, similarity, request)
        ]
        return together(walk(request, best, self.hop), request.weights.get("conversation", 0.0), request.kept)

    def _speaking(self, request: SearchRequest) -> set[str]:
        """Which of the question's ``names`` speak in a text (unit or episode) of the scopes."""
        if not request.names:
            return set()
        state = self.store._state
        owners = [state.unit_mentions.get(k, {}) for k, u in state.units.items() if u.scope in request.scopes]
        owners += [state.episode_mentions.get(k, {}) for k, e in state.episodes.items() if e.scope in request.scopes]
        return {norm for norm in request.names for names in owners if names.get(norm, ("", ""))[1] == "speaker"}

    def _near(
        self,
        request: SearchRequest,
        window: tuple[datetime, datetime],
        units: Sequence[MemoryUnit],
        vector: Sequence[float],
    ) -> list[Hit]:
        """The time list: of the units near the window (``graphmem.domain.entries.near``), the
        ``fetch`` most like the question, scored by how near (equal distances tie)."""
        found = []
        for rule in near(window, world_range(request.at, request.during), [k.value for k in request.kinds]):
            for u in units:
                t_from, t_to = micros(u.time.valid_at, MIN), micros(u.time.invalid_at, MAX)
                if u.kind.value in rule.kinds and rule.from_lo <= t_from < rule.from_hi and t_to > rule.to_lo:
                    found.append((u, nearness(t_from, t_to, window, rule.event, request.began_first)))
        similar = {h.id: h.score for h in self._cosine(vector, [u for u, _ in found])}
        best = sorted((u for u, _ in found if u.id in similar), key=lambda u: (-similar[u.id], u.id))[: request.fetch]
        gap = {u.id: d for u, d in found}
        return _top([Hit(id=u.id, score=-gap[u.id]) for u in best], request.fetch)

    def _said(self, request: SearchRequest, lists: dict[str, list[Hit]]) -> list[Hit]:
        """The speaker list: of the candidates in ``lists``, those said by someone the question
        names (a "Name: message" line's speaker, every word of the name in the question), tied."""
        asked = set(request.words or ())
        mentions = self.store._state.unit_mentions
        return [
            Hit(id=i, score=1.0)
            for i in sorted({h.id for hits in lists.values() for h in hits})
            if any(kind == "speaker" and set(words(name)) <= asked for name, kind in mentions.get(i, {}).values())
        ]

    def _about(self, request: SearchRequest, units: Sequence[MemoryUnit]) -> list[Hit]:
        """Units about the entities the question names (see ``search_entities``) and linked to
        at most ``fanout`` units, each scored by the sum of its entities' share of words named
        times their specificity, so the units of one entity tie."""
        asked = set(request.words or ())
        degree = self._degree()
        named_by = {u.id: {n for n in self.store.named(u) if degree[(u.scope.key, n)] <= request.fanout} for u in units}
        names = {n for named in named_by.values() for n in named}
        share = {n: len(set(words(n)) & asked) / max(len(set(words(n))), 1) for n in names}
        named = [n for n in names if share[n] == 1.0] or [n for n in names if share[n] > 0]
        chosen = set(sorted(named, key=lambda n: (-share[n], n))[: request.seeds])
        hits = []
        for u in units:
            about = [share[n] * _specificity(degree[(u.scope.key, n)]) for n in named_by[u.id] if n in chosen]
            if about:
                hits.append(Hit(id=u.id, score=sum(about)))
        return _top(hits, request.fetch)

    def _degree(self) -> dict[tuple[str, str], int]:
        """How many units (any state) are about or name each entity, by (scope key, norm)."""
        degree: dict[tuple[str, str], int] = {}
        for u in self.store._state.units.values():
            for norm in self.store.named(u):
                degree[(u.scope.key, norm)] = degree.get((u.scope.key, norm), 0) + 1
        return degree

    def hop(self, request: SearchRequest, step: Step) -> list[Reached]:
        units = [u for u in self._visible(request) if u.id not in step.seen]
        vectors = self.store._state.vectors
        named_by = {u.id: self.store.named(u) for u in units}
        degree = self._degree()
        asked = set(request.words or ())
        best: dict[str, Reached] = {}
        for position, source_id in enumerate(step.frontier):
            came = step.through[position] if position < len(step.through) else None
            came = normalise(came) if came is not None else None
            source = self.store._state.units.get(source_id)
            if source is None:
                continue
            # a path from a unit naming none of the question's entities counts half (hop.cypher)
            anchor = 1.0 if any(words(n) and set(words(n)) <= asked for n in self.store.named(source)) else 0.5
            for norm, name in sorted(self.store.named(source).items()):
                if norm == came:
                    continue  # a path crosses an entity once (Step)
                if degree[(source.scope.key, norm)] > request.fanout:
                    continue  # a hub: which of its units would be read is arbitrary
                if words(norm) and set(words(norm)) <= asked:
                    continue  # the question names it: its units are the direct search's to find
                specificity = anchor * _specificity(degree[(source.scope.key, norm)])
                near = [u for u in units if u.id != source_id and norm in named_by[u.id]]
                for u in near[: request.fanout]:
                    sim = _path(request.vector, vectors.get(source_id), vectors.get(u.id))
                    score = (1.0 if sim is None else sim) * specificity
                    key = (-score, source_id, name)
                    if u.id not in best or key < (-best[u.id].score, best[u.id].source, best[u.id].via):
                        best[u.id] = Reached(source=source_id, via=name, unit=u, score=score, similarity=sim)

        def loses(r: Reached) -> bool:  # to the path back from the unit it reaches (Step)
            back = best.get(r.source)
            return back is not None and back.source == r.unit.id and (-back.score, back.unit.id) < (-r.score, r.unit.id)

        return sorted((r for r in best.values() if not loses(r)), key=lambda r: (-r.score, r.unit.id))[: step.limit]

    def search_semantic_many(self, queries: Sequence[str], scope: Scope, k: int, at: AsOf) -> list[list[Scored]]:
        units = self._visible(SearchRequest(scopes=(scope,), at=at, k=k, fetch=k))
        by_id = {u.id: u for u in units}
        return [
            [Scored(unit=by_id[h.id], score=h.score) for h in _top(self._cosine(v, units), k)]
            for v in self.vectors(queries)
        ]

    def clear_cache(self) -> None:
        """Nothing is cached here: vectors live in the store, erased with their units."""

    def rebuild(self, scope: Scope | None = None, progress: Callable[[int], None] | None = None) -> int:
        units = [u for u in self.store._state.units.values() if scope is None or u.scope == scope]
        for u, v in zip(units, self.vectors([u.content for u in units])):
            self.store._state.vectors[u.id] = v
        return len(units)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two L2-normalised vectors, as Neo4j's cosine index scores it: (1 + cos) / 2."""
    return (1 + sum(x * y for x, y in zip(a, b))) / 2


def _path(question: Sequence[float] | None, a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    """The cosine between the question and the path a + b (unit vectors), from the pairwise
    cosines, as the Neo4j hop computes it."""
    if question is None or a is None or b is None:
        return None

    def cos(x: Sequence[float], y: Sequence[float]) -> float:
        return 2 * _cosine(x, y) - 1  # _cosine is (1 + cos) / 2

    return (cos(a, question) + cos(b, question)) / math.sqrt(2 + 2 * cos(a, b) + 1e-9)


def bm25(
    query: Sequence[str], docs: Sequence[tuple[str, Sequence[str]]], k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    """Okapi BM25 with Lucene's idf, as the fulltext index scores: each document (key, its
    terms) with at least one query term, by key. A term repeated in the query counts again."""
    if not query or not docs:
        return {}
    avg = sum(len(w) for _, w in docs) / len(docs)
    df = {t: sum(1 for _, w in docs if t in w) for t in set(query)}
    scores = {}
    for key, doc in docs:
        score = 0.0
        for t in query:
            tf = doc.count(t)
            if tf:
                idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avg))
        if score > 0:
            scores[key] = score
    return scores


def _specificity(linked: int) -> float:
    """1 / log2(1 + units linked to an entity): an entity named everywhere tells little."""
    return math.log(2) / math.log(1 + linked)


def _top(hits: Sequence[Hit], k: int) -> list[Hit]:
    return sorted(hits, key=lambda h: (-h.score, h.id))[:k]
