"""``InMemoryStore``: the ``MemoryStore`` port in process memory, for fast tests.

It passes the same contract suite as ``Neo4jStore`` (``tests/contract``), so pipelines tested on
it behave the same on Neo4j. Its records are ``Tables``, which the ``InMemoryIndex`` built on it
reads too.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime

from graphmem.adapters.memory import erasure, exchange, listing, writes
from graphmem.adapters.memory.tables import Recalls, Tables, Version
from graphmem.adapters.memory.units import edges_of, units_at, with_edges
from graphmem.domain.mentions import named_in
from graphmem.domain.models import (
    ApiKey,
    Appended,
    AsOf,
    AssembleTrace,
    Decision,
    Deletion,
    EntitySummary,
    Episode,
    Erasure,
    GroupUnit,
    Job,
    MemoryBlock,
    MemoryUnit,
    NamesRead,
    Page,
    RecallStats,
    RecordKind,
    Relink,
    ReviewItem,
    Rewrite,
    Scope,
    SubjectCounts,
    TextsRead,
    UnitEdges,
    UnitFilter,
    UnitKey,
    UnitQuery,
    WriteBatch,
    entity_id,
    utcnow,
)
from graphmem.errors import Conflict
from graphmem.ports import Record

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """MemoryStore in process memory (see ``graphmem.ports.MemoryStore``)."""

    def __init__(self) -> None:
        #: The records, which the ``InMemoryIndex`` built on this store reads too.
        self.tables = Tables()
        self._lock = self.tables.lock
        #: What erasure records key their subject's HMAC with.
        self._secret = secrets.token_bytes(32)

    # -- episodes ---------------------------------------------------------------------------
    def put_episodes(self, episodes: Sequence[Episode]) -> Appended:
        with self._lock:
            return self.tables.append(episodes, undecided=True)

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        with self._lock:
            episode = self.tables.episodes.get((scope.key, episode_id))
            if episode is None:
                return None
            derived = sorted(
                (u for u in self.tables.units.values() if u.source.episode_id == episode_id and u.scope == scope),
                key=lambda u: (u.time.created_at, u.id),
            )
            return episode.model_copy(update={"derived_ids": tuple(u.id for u in derived)})

    def list_episode_ids(self, scope: Scope, page: Page = Page()) -> list[str]:
        with self._lock:
            eps = sorted(
                (e for e in self.tables.episodes.values() if e.scope == scope), key=lambda e: (e.occurred_at, e.id)
            )
        return [e.id for e in eps][page.offset : page.offset + page.limit]

    def processed_episodes(self, scope: Scope, ids: Iterable[str]) -> set[str]:
        with self._lock:
            return {i for i in ids if i in self.tables.view(scope).decided}

    def undecided_episodes(self, scope: Scope | None = None, limit: int = 100) -> list[list[Episode]]:
        with self._lock:
            found = sorted(
                (place, key) for key, place in self.tables.undecided.items() if scope is None or key[0] == scope.key
            )
            by_write: dict[int, list[Episode]] = {}
            for place, key in found:
                by_write.setdefault(place.write, []).append(self.tables.episodes[key])
            return list(by_write.values())[:limit]

    def undecided_count(self, scopes: Sequence[Scope] | None = None) -> int:
        keys = None if scopes is None else {s.key for s in scopes}
        with self._lock:
            return sum(1 for scope_key, _ in self.tables.undecided if keys is None or scope_key in keys)

    # -- writes -----------------------------------------------------------------------------
    def stage(self, batch: WriteBatch, scope: Scope) -> WriteBatch:
        return batch  # nothing to shape: a commit here is a copy under a lock

    def commit(self, batch: WriteBatch, scope: Scope, relink: Relink | None = None) -> None:
        with self._lock:
            writes.commit(self.tables, batch, scope, relink)

    def delete_episode(self, episode_id: str, scope: Scope, rewrite: Rewrite, deletion: Deletion) -> Deletion | None:
        with self._lock:
            return writes.delete_episode(self.tables, episode_id, scope, rewrite, deletion)

    # -- units ------------------------------------------------------------------------------
    def get_unit(self, unit_id: str, scope: Scope, at: AsOf | None = None) -> MemoryUnit | None:
        found = self.list_units(scope, UnitFilter(ids=(unit_id,), include_expired=at is None), Page(limit=1), at)
        return found[0] if found else None

    def list_units(
        self, scope: Scope, flt: UnitFilter, page: Page = Page(), at: AsOf | None = None
    ) -> list[MemoryUnit]:
        with self._lock:
            found = units_at(self.tables, scope, flt, at or AsOf.now())
        return found[page.offset : page.offset + page.limit]

    def page_units(
        self, scope: Scope, query: UnitQuery, at: AsOf, after: UnitKey | None = None, limit: int = 100
    ) -> list[MemoryUnit]:
        with self._lock:
            return listing.unit_page(self.tables, scope, query, at, after, limit)

    def page_entities(
        self, scope: Scope, at: AsOf, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[EntitySummary]:
        with self._lock:
            return listing.entity_page(self.tables, scope, at, prefix, after, limit)

    def unit_records(self, scope: Scope, ids: Sequence[str]) -> list[GroupUnit]:
        with self._lock:
            units = [self.tables.units.get(uid) for uid in dict.fromkeys(ids)]
            return [with_edges(self.tables, u) for u in units if u is not None and u.scope == scope]

    def units_naming(self, scope: Scope, entity: str) -> list[GroupUnit]:
        eid = entity_id(scope, entity)
        with self._lock:
            units = [
                u
                for u in self.tables.units.values()
                if u.scope == scope
                and u.triple
                and eid in {entity_id(scope, n) for n in (u.triple.subject, u.triple.object) if n}
            ]
            return [with_edges(self.tables, u) for u in units]

    def unit_entities(self, scope: Scope, unit_id: str) -> list[tuple[str, str]]:
        with self._lock:
            unit = self.tables.units.get(unit_id)
            if unit is None or unit.scope != scope:
                return []
            about = (
                [(unit.triple.subject, "subject")]
                + ([(unit.triple.object, "object")] if unit.triple and unit.triple.object else [])
                if unit.triple
                else []
            )
            named = [(m.name, m.kind) for m in self.tables.unit_mentions.get(unit_id, {}).values()]
        return sorted(about + named)

    def episode_entities(self, scope: Scope, episode_id: str) -> list[tuple[str, str]]:
        with self._lock:
            if (scope.key, episode_id) not in self.tables.episodes:
                return []
            mentions = self.tables.episode_mentions.get((scope.key, episode_id), {})
            return sorted((m.name, m.kind) for m in mentions.values())

    def known_names(self, scope: Scope, texts: Collection[str]) -> tuple[NamesRead, dict[str, bool]]:
        with self._lock:
            version = self.tables.names.get(scope, Version(0, None))
            known = self.tables.view(scope).names.find(texts)
        return NamesRead(version=version.number, last=version.last), known

    def earlier_texts(self, scope: Scope, anchors: Sequence[tuple[str, bool]]) -> TextsRead:
        with self._lock:
            version = self.tables.texts.get(scope, Version(0, None))
            view = self.tables.view(scope)
            units, episodes = view.naming(anchors, "unit"), view.naming(anchors, "episode")
        return TextsRead(
            version=version.number,
            last=version.last,
            found={uid: units[uid] for uid in named_in(anchors, units)},
            episodes={eid: episodes[eid] for eid in named_in(anchors, episodes)},
        )

    def list_scopes(self) -> list[Scope]:
        with self._lock:
            return sorted({u.scope for u in self.tables.units.values()}, key=lambda s: s.key)

    def record_recall(self, scope: Scope, stats: Mapping[str, RecallStats]) -> int:
        with self._lock:
            units = self.tables.units
            found = [uid for uid in stats if uid in units and units[uid].scope == scope]
            for uid in found:
                patch = stats[uid]
                last, count = self.tables.usage.get(uid, (patch.recalled_at, 0))
                self.tables.usage[uid] = Recalls(max(last, patch.recalled_at), count + patch.increment)
            return len(found)

    def set_archived(self, scope: Scope, unit_ids: list[str], archived_at: datetime | None) -> int:
        with self._lock:
            self.tables.texts_changed(scope)
            ids = [i for i in unit_ids if i in self.tables.units and self.tables.units[i].scope == scope]
            for uid in ids:
                if archived_at is None:
                    self.tables.archived.pop(uid, None)
                else:
                    self.tables.archived[uid] = archived_at
            return len(ids)

    def archived_ids(self, scope: Scope) -> set[str]:
        with self._lock:
            units = self.tables.units
            return {i for i in self.tables.archived if i in units and units[i].scope == scope}

    # -- timelines --------------------------------------------------------------------------
    def group_state(self, scope: Scope, groups: Sequence[str]) -> tuple[list[Decision], list[GroupUnit]]:
        wanted = set(groups)
        with self._lock:
            view = self.tables.view(scope)
            events = [d for g in wanted for d in view.group_events.get(g, ())]
            units = [view.units[i] for g in wanted for i in view.group_units.get(g, ())]
            return sorted(events, key=lambda d: (d.decided_at, d.id)), [with_edges(self.tables, u) for u in units]

    def episode_groups(self, scope: Scope, episode_id: str) -> set[str]:
        with self._lock:
            found = {
                d.event.group
                for d in self.tables.decisions.values()
                if d.scope == scope and d.episode_id == episode_id and d.event is not None
            }
            return found | {
                u.group
                for u in self.tables.units.values()
                if u.scope == scope and u.source.episode_id == episode_id and u.group
            }

    def episode_events(self, scope: Scope, episode_ids: Sequence[str]) -> list[Decision]:
        wanted = set(episode_ids)
        with self._lock:
            found = [
                d
                for d in self.tables.decisions.values()
                if d.scope == scope and d.episode_id in wanted and d.event is not None
            ]
        return sorted(found, key=lambda d: (d.decided_at, d.id))

    # -- audit ------------------------------------------------------------------------------
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
            hit_units = {e.decision_id for e in self.tables.edges if wanted is not None and e.unit_id in wanted}
            found = [
                d
                for d in self.tables.decisions.values()
                if d.scope == scope
                and (episode_id is None or d.episode_id == episode_id)
                and (op is None or d.op.value == op)
                and (wanted is None or d.target_id in wanted or d.produced_id in wanted or d.id in hit_units)
            ]
        found.sort(key=lambda d: (-d.decided_at.timestamp(), d.id))
        return found[:limit]

    def invalidations(self, unit_id: str, scope: Scope) -> UnitEdges:
        with self._lock:
            return edges_of(self.tables, unit_id, scope)

    def put_trace(self, trace: AssembleTrace, scores: Sequence[float] = ()) -> None:
        with self._lock:
            self.tables.traces[trace.id] = trace
            self.tables.trace_scores[trace.id] = tuple(
                scores[rank] if rank < len(scores) else None for rank in range(len(trace.recalled_ids))
            )

    def get_trace(self, trace_id: str, scope: Scope) -> AssembleTrace | None:
        trace = self.tables.traces.get(trace_id)
        return trace if trace is not None and trace.scope == scope else None

    def prune_traces(self, scope: Scope | None, before: datetime, dry_run: bool = False) -> int:
        with self._lock:
            traces = self.tables.traces
            old = [t.id for t in traces.values() if (scope is None or t.scope == scope) and t.created_at < before]
            if not dry_run:
                for tid in old:
                    del traces[tid]
                    self.tables.trace_scores.pop(tid, None)
            return len(old)

    # -- review queue -----------------------------------------------------------------------
    def list_reviews(
        self, scope: Scope | None = None, status: str | None = "pending", limit: int = 100
    ) -> list[ReviewItem]:
        with self._lock:
            found = [
                r
                for r in self.tables.reviews.values()
                if (scope is None or r.scope == scope) and (status is None or r.status == status)
            ]
        return sorted(found, key=lambda r: (r.created_at, r.id))[:limit]

    def get_review(self, review_id: str) -> ReviewItem | None:
        return self.tables.reviews.get(review_id)

    def decide_review(self, review_id: str, status: str, note: str | None = None) -> bool:
        with self._lock:
            item = self.tables.reviews.get(review_id)
            if item is None or item.status != "pending":
                return False
            self.tables.reviews[review_id] = item.model_copy(
                update={"status": status, "decided_at": utcnow(), "note": note}
            )
            return True

    # -- erasure ----------------------------------------------------------------------------
    def start_erasure(
        self, subject_type: str, subject_id: str, project_id: str | None, actor: str | None = None
    ) -> Erasure:
        with self._lock:
            return erasure.start_erasure(self.tables, self._secret, subject_type, subject_id, project_id, actor)

    def erase_batch(
        self, erasure_id: str, subject_type: str, subject_id: str, project_id: str | None, batch: int
    ) -> Erasure:
        def mine(scope: Scope) -> bool:
            return (scope.subject_type.value, scope.subject_id) == (subject_type, subject_id) and (
                project_id is None or scope.project_id == project_id
            )

        with self._lock:
            return erasure.erase_batch(self.tables, erasure_id, mine, batch)

    def last_erasure(self, scope: Scope) -> datetime | None:
        with self._lock:
            found = erasure.erasures_of(self.tables, self._secret, scope)
        return max((t for r in found if (t := r.updated_at or r.started_at)), default=None)

    def erased(self, scope: Scope) -> bool:
        with self._lock:
            found = erasure.erasures_of(self.tables, self._secret, scope)
        return any(r.status != "done" or any(r.counts.values()) for r in found)

    # -- blocks -----------------------------------------------------------------------------
    def put_block(self, block: MemoryBlock) -> None:
        with self._lock:
            existing = self.tables.blocks.get((block.scope.key, block.label))
            keep_id = {"id": existing.id} if existing else {}
            self.tables.blocks[(block.scope.key, block.label)] = block.model_copy(update=keep_id)

    def get_block(self, scope: Scope, label: str) -> MemoryBlock | None:
        return self.tables.blocks.get((scope.key, label))

    def list_blocks(self, scope: Scope, label: str | None = None) -> list[MemoryBlock]:
        with self._lock:
            found = [b for (k, held), b in self.tables.blocks.items() if k == scope.key and label in (None, held)]
        return sorted(found, key=lambda b: b.label)

    def delete_block(self, scope: Scope, label: str) -> bool:
        with self._lock:
            return self.tables.blocks.pop((scope.key, label), None) is not None

    # -- whole subjects ---------------------------------------------------------------------
    def subjects(self) -> list[SubjectCounts]:
        with self._lock:
            return exchange.subjects(self.tables)

    def dump(
        self, scope: Scope, kind: RecordKind, after: str = "", limit: int = 1000
    ) -> tuple[list[Record], str | None]:
        with self._lock:
            return exchange.dump(self.tables, scope, kind, after, limit)

    def lookup(self, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
        with self._lock:
            return exchange.lookup(self.tables, scope, kind, keys)

    def load(
        self, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch | None = None
    ) -> int:
        with self._lock:
            return exchange.load(self.tables, scope, records, derived or WriteBatch())

    # -- API keys ---------------------------------------------------------------------------
    def put_key(self, key: ApiKey) -> None:
        with self._lock:
            if key.id in self.tables.keys:
                raise Conflict(f"key {key.id} already exists")
            self.tables.keys[key.id] = key

    def get_key(self, key_id: str) -> ApiKey | None:
        with self._lock:
            return self.tables.keys.get(key_id)

    def list_keys(self) -> list[ApiKey]:
        with self._lock:
            return sorted(self.tables.keys.values(), key=lambda k: (k.created_at, k.id))

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        with self._lock:
            key = self.tables.keys.get(key_id)
            if key is not None and key.revoked_at is None:
                key = self.tables.keys[key_id] = key.model_copy(update={"revoked_at": at})
            return key

    def drop_key_subject(self, subject: str, at: datetime) -> list[ApiKey]:
        with self._lock:
            changed = []
            for key in [k for k in self.tables.keys.values() if subject in k.subjects]:
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
                self.tables.keys[key.id] = changed[-1]
            return changed

    # -- jobs -------------------------------------------------------------------------------
    def put_job(self, job: Job) -> None:
        with self._lock:
            self.tables.jobs[job.id] = job

    def end_job(self, job: Job) -> bool:
        with self._lock:
            if job.id not in self.tables.jobs:
                return False
            self.tables.jobs[job.id] = job
            return True

    def get_job(self, job_id: str) -> Job | None:
        with self._lock:
            return self.tables.jobs.get(job_id)

    def drop_jobs(self, before: datetime) -> int:
        with self._lock:
            old = [k for k, job in self.tables.jobs.items() if job.created_at < before]
            for key in old:
                del self.tables.jobs[key]
            return len(old)
