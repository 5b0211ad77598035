"""The store, the source of truth, split by concern so that each pipeline names what it uses;
``MemoryStore`` is all of them.

Where a method takes ``at: AsOf``, a unit is visible at T = ``at.valid`` and S = ``at.known``
by the rule of docs/concepts.md, "Bi-temporal visibility"::

    visible(u, T, S) :=  u.created_at <= S
                     and (u.valid_at is null or u.valid_at <= T)
                     and (u's own invalid_at is null or T < it)
                     and no invalidation edge e -> u with e.expired_at <= S
                                                  and (e.invalid_at is null or e.invalid_at <= T)

A returned unit is as the system saw it at S: its ``expired_at`` is the earliest
``e.expired_at <= S``, its ``invalid_at`` the earliest of its own end and those edges'
``invalid_at``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

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
)
from graphmem.ports.records import Record


class EpisodeStore(Protocol):
    """Episodes: the raw events, append-only. An episode id belongs to its scope.

    - storing an id its scope holds with the same fingerprint is a no-op; with another
      fingerprint the episode is reported, not stored;
    - only ``TimelineStore.delete_episode`` and an erasure delete an episode;
    - a new episode is undecided until the commit that decides it (``WriteBatch.decided``); one
      a crash left so is counted by ``undecided_count`` and completed from
      ``undecided_episodes``. An import's episodes come with their decisions.
    """

    def put_episodes(self, episodes: Sequence[Episode]) -> Appended:
        """Store episodes in one transaction, the new ones undecided: how many were new, and
        the positions of those whose scope holds other content under their id (not stored;
        the rest are). A repeated id within ``episodes`` counts as stored by its first
        occurrence."""
        ...

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None: ...

    def list_episode_ids(self, scope: Scope, page: Page = Page()) -> list[str]:
        """Ids of the scope's episodes by (occurred_at, id), paged."""
        ...

    def processed_episodes(self, scope: Scope, ids: Iterable[str]) -> set[str]:
        """The ids among ``ids`` whose candidates already have stored decisions."""
        ...

    def undecided_episodes(self, scope: Scope | None = None, limit: int = 100) -> list[list[Episode]]:
        """Undecided episodes (of one scope, or of all), by the write that stored them: each
        list holds one ``put_episodes`` call's undecided episodes in the order given there, the
        lists in the order they were stored; at most ``limit`` lists."""
        ...

    def undecided_count(self, scopes: Sequence[Scope] | None = None) -> int:
        """How many episodes of these scopes (of all, when None) are undecided: one cheap read,
        as recall makes it."""
        ...


class UnitStore(Protocol):
    """Units (facts) as read, the names they are about, and what happens to them in use.

    A unit's content, kind, scope and times are written once (by ``TimelineStore.commit`` or an
    import); nothing is ever set on a stored unit: recall statistics and archive state are kept
    beside it, and ends come from invalidation edges.
    """

    def get_unit(self, unit_id: str, scope: Scope, at: AsOf | None = None) -> MemoryUnit | None:
        """The unit as seen at ``at.known`` (None when not visible at ``at``). With ``at`` None,
        the unit as seen now whether or not it is still visible (history, explain)."""
        ...

    def list_units(
        self, scope: Scope, flt: UnitFilter, page: Page = Page(), at: AsOf | None = None
    ) -> list[MemoryUnit]:
        """Units matching ``flt`` and visible at ``at`` (now when None; no visibility test when
        ``flt.include_expired``), ordered by (created_at, id), paged."""
        ...

    def page_units(
        self, scope: Scope, query: UnitQuery, at: AsOf, after: UnitKey | None = None, limit: int = 100
    ) -> list[MemoryUnit]:
        """Units known at ``at.known`` that ``query`` matches (their ``UnitStatus`` read at
        ``at``; its entity resolved in the scope, the units about or naming it), each as seen
        at ``at.known`` (as ``list_units``): newest first by (created_at, id), those strictly
        after ``after`` in that order, at most ``limit``."""
        ...

    def page_entities(
        self, scope: Scope, at: AsOf, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[EntitySummary]:
        """Entities a unit or episode of the scope is about or names, by normalised name: those
        whose name starts with ``prefix`` and comes after ``after`` (both normalised), at most
        ``limit``. ``facts`` counts the units about it visible at ``at``; ``aliases`` and
        ``last_change`` (None with no fact about it) read the facts known at ``at.known``."""
        ...

    def unit_records(self, scope: Scope, ids: Sequence[str]) -> list[GroupUnit]:
        """Units by id at any system time, each with all its invalidation edges."""
        ...

    def units_naming(self, scope: Scope, entity: str) -> list[GroupUnit]:
        """Every unit about an entity (by name, resolved within the scope) at any system time,
        with all its invalidation edges."""
        ...

    def unit_entities(self, scope: Scope, unit_id: str) -> list[tuple[str, str]]:
        """(name, how) of every entity a unit is about (how: its role, subject or object) or
        names (how: the mention's kind: speaker, proper, known, fact), by name."""
        ...

    def episode_entities(self, scope: Scope, episode_id: str) -> list[tuple[str, str]]:
        """(name, how) of every entity an episode names (how: the mention's kind), by name:
        the same whichever order the episode and the facts or texts that made its names known
        arrived in."""
        ...

    def known_names(self, scope: Scope, texts: Collection[str]) -> tuple[NamesRead, dict[str, bool]]:
        """The names the scope knows that one of ``texts`` holds as a word run that may be a
        name (``mentions.runs_in``): True when a fact is about it (found case-folded), False when
        a text named it (found where capitalised), as ``mentions.KnownNames`` finds them. With,
        read first, the scope's names version and the digest of the last commit's names
        (``mentions.digest``; None before any): ``TimelineStore.commit`` checks them."""
        ...

    def earlier_texts(self, scope: Scope, anchors: Sequence[tuple[str, bool]]) -> TextsRead:
        """The texts of the scope's units (archived too) and episodes, by id, that name one of
        ``anchors`` (``WriteBatch.anchors``); more may be given (texts holding a name's words in
        order), never fewer. With, read first, the scope's texts version and its last key
        (``WriteBatch.texts_key``): every change to which texts a search finds bumps it (new
        units, episodes or restored units, a deletion, an archive change, an import), and
        ``TimelineStore.commit`` checks it (``TextsRead``)."""
        ...

    def list_scopes(self) -> list[Scope]:
        """Every scope holding units, by scope key."""
        ...

    def record_recall(self, scope: Scope, stats: Mapping[str, RecallStats]) -> int:
        """Record recalls in one write, beside the units (never on them): per unit,
        ``last_recalled_at`` = max(old, given) and ``recall_count`` += ``increment``. Ids not
        stored in the scope are skipped, including a unit whose deletion commits while this
        runs: no statistics outlive their unit. Returns how many were recorded."""
        ...

    def set_archived(self, scope: Scope, unit_ids: list[str], archived_at: datetime | None) -> int:
        """Archive units of the scope at ``archived_at`` (or restore them, with None): their
        search entries leave (or rejoin) search with it. As ``record_recall``, nothing is kept
        for a unit deleted meanwhile. Returns how many were found."""
        ...

    def archived_ids(self, scope: Scope) -> set[str]:
        """Ids of the scope's archived units."""
        ...


class TimelineStore(Protocol):
    """Writes of decisions, units and invalidation edges, and the timeline groups they form
    (``graphmem.domain.timeline``).

    - ``commit`` adds units, decisions and invalidation edges and never changes a stored unit;
    - units are deleted only by ``delete_episode`` and by an erasure (``ErasureStore``).
    """

    def group_state(self, scope: Scope, groups: Sequence[str]) -> tuple[list[Decision], list[GroupUnit]]:
        """Every decision that entered the log of one of these timeline groups (``Decision.event``
        set), oldest first, and every unit of these groups at any system time with all its
        invalidation edges (``graphmem.domain.timeline``)."""
        ...

    def episode_groups(self, scope: Scope, episode_id: str) -> set[str]:
        """The timeline groups an episode's decisions and units belong to."""
        ...

    def episode_events(self, scope: Scope, episode_ids: Sequence[str]) -> list[Decision]:
        """The decisions of these episodes that entered a timeline log, oldest first."""
        ...

    def stage(self, batch: WriteBatch, scope: Scope) -> WriteBatch:
        """``batch`` with what this store does for its commit outside the commit's transaction
        (shaping its rows) done now, in the caller's thread (``WriteBatch.staged``): a write
        stages a batch while the one before commits. Committing the result is committing
        ``batch``; a copy of it with other units, decisions, invalidations, vectors, names or
        texts is shaped again by the commit."""
        ...

    def commit(self, batch: WriteBatch, scope: Scope, relink: Relink | None = None) -> None:
        """Store the batch all or nothing, with its search entries and mention links (from
        earlier texts to the names it makes known too).

        - ``Conflict`` when a guarded group's log changed since ``group_state``, or a unit id is
          taken; ``NotFound`` when a decision's episode left the scope;
        - with guards, links or names it holds the scope's names lock to its end, taken before
          the guards so writers of one group take turns (``WriteBatch.held``); it bumps the
          versions it changes.
        """
        ...

    def delete_episode(self, episode_id: str, scope: Scope, rewrite: Rewrite, deletion: Deletion) -> Deletion | None:
        """In one transaction: delete the episode, the units it produced and its decisions (with
        their edges), apply ``rewrite`` (the records re-deriving the timelines they touched) and
        store the deletion record with the counts. None when the episode is not in the scope."""
        ...


class AuditStore(Protocol):
    """The decision log and assembly traces: append-only records you can walk (traces leave
    only by ``prune_traces`` or an erasure)."""

    def list_decisions(
        self,
        scope: Scope,
        episode_id: str | None = None,
        op: str | None = None,
        unit_id: str | None = None,
        limit: int = 100,
        unit_ids: Sequence[str] | None = None,
    ) -> list[Decision]:
        """Decisions of the scope, newest first, at most ``limit``: of one episode, of one op,
        and touching ``unit_id`` or one of ``unit_ids`` (targeting, producing or invalidating
        it) when given."""
        ...

    def invalidations(self, unit_id: str, scope: Scope) -> UnitEdges:
        """The invalidation edges into a unit and out of the decision that produced it."""
        ...

    def put_trace(self, trace: AssembleTrace, scores: Sequence[float] = ()) -> None:
        """Store an assembly trace with the score of each recalled unit, by rank."""
        ...

    def get_trace(self, trace_id: str, scope: Scope) -> AssembleTrace | None: ...

    def prune_traces(self, scope: Scope | None, before: datetime, dry_run: bool = False) -> int:
        """Delete the assembly traces created before ``before`` (of one scope, or of all),
        in bounded batches; with ``dry_run`` only count them. Returns how many."""
        ...


class ReviewStore(Protocol):
    """Candidates held for human review (written by ``TimelineStore.commit``). Review items
    are looked up by id across scopes: the id is what an operator is shown."""

    def list_reviews(
        self, scope: Scope | None = None, status: str | None = "pending", limit: int = 100
    ) -> list[ReviewItem]:
        """Items of one scope (all when None) with this status (any when None), oldest first."""
        ...

    def get_review(self, review_id: str) -> ReviewItem | None: ...

    def decide_review(self, review_id: str, status: str, note: str | None = None) -> bool:
        """Mark a pending item ``status`` with ``note``; False when it is missing or decided."""
        ...


class ErasureStore(Protocol):
    """Erasure of a subject: bounded batches, each counted on the erasure record in its own
    transaction. A record names the subject only by HMAC keys under a secret of the store's own
    (``graphmem.domain.models.erasure_keys``), never in plain text or a plain hash."""

    def start_erasure(
        self, subject_type: str, subject_id: str, project_id: str | None, actor: str | None = None
    ) -> Erasure:
        """The erasure record of a subject (one project, or every project when None): the
        unfinished one, to resume, or a new one (``status`` "running") naming who asked."""
        ...

    def erase_batch(
        self, erasure_id: str, subject_type: str, subject_id: str, project_id: str | None, batch: int
    ) -> Erasure:
        """Delete up to ``batch`` records of each kind belonging to the subject and add the
        counts to the erasure record, atomically; a batch that deletes nothing marks the record
        "done". Returns the record."""
        ...

    def last_erasure(self, scope: Scope) -> datetime | None:
        """When an erasure of the scope (of its subject with every project, or of its own
        project) last began or removed a batch; None when none ever did. A writer that read
        another value before has raced an erasure."""
        ...

    def erased(self, scope: Scope) -> bool:
        """Whether an erasure of the scope erased anything or is still running: of its subject
        with every project, or of its own project (an importer skips such subjects). One of a
        subject that held nothing does not count: it took nothing an import could bring back."""
        ...


class BlockStore(Protocol):
    """Resident blocks, one per (scope, label): ``put_block`` of a stored label replaces its
    content and keeps its id."""

    def put_block(self, block: MemoryBlock) -> None: ...

    def get_block(self, scope: Scope, label: str) -> MemoryBlock | None: ...

    def list_blocks(self, scope: Scope, label: str | None = None) -> list[MemoryBlock]:
        """The scope's blocks (of one label when given), by label."""
        ...

    def delete_block(self, scope: Scope, label: str) -> bool:
        """Delete a block; False when there was none."""
        ...


class ExchangeStore(Protocol):
    """Whole subjects as records: listing, export (``dump``) and import (``lookup``, ``load``)."""

    def subjects(self) -> list[SubjectCounts]:
        """Every scope holding episodes, units or decisions, with how many of each, in scope
        order (type, id, then project with no project last)."""
        ...

    def dump(
        self, scope: Scope, kind: RecordKind, after: str = "", limit: int = 1000
    ) -> tuple[list[Record], str | None]:
        """One page of the scope's records of one kind, as stored, by key after ``after`` ("" at
        first), and the key the next page starts after (None after the last).

        - keys are ids; of ``usage`` its unit's, of ``invalidation`` its decision's (a page holds
          every edge of up to ``limit`` decisions);
        - a unit comes with its own end only, an episode without derived ids, a trace with its
          scores; search entries and entity words are derived, never records.
        """
        ...

    def lookup(self, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
        """The scope's records of one kind with these keys (as ``dump`` gives them), and the
        keys a record of another scope holds (ids are unique in the whole database; nothing
        of that record is returned)."""
        ...

    def load(
        self, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch | None = None
    ) -> int:
        """Store new records (check with ``lookup``) exactly as given, ids and times too, in one
        transaction, kind by kind in ``RECORD_KINDS`` order, linked to the stored records their
        fields name (links to records not stored are left out). Returns how many.

        - derived data comes with them: entities and search entries of units, entries of the
          units edges change, archived usage out of search; ``derived`` gives the rest as
          ``commit`` takes it (vectors, mention links, anchors).
        """
        ...


class KeyStore(Protocol):
    """API keys (``graphmem.domain.keys``), stored by id with the digest of their secret only. Keys
    belong to no scope: they name the subjects they hold.

    - ``put_key`` of an existing id raises ``Conflict``;
    - a revoked key stays listed (with ``revoked_at``) and is never live again;
    - ``drop_key_subject`` is how an erasure reaches keys: the subject leaves every key that
      holds it, and a non-admin key left with no subject is revoked.
    """

    def put_key(self, key: ApiKey) -> None: ...

    def get_key(self, key_id: str) -> ApiKey | None: ...

    def list_keys(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first."""
        ...

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        """Revoke a key (a revoked one keeps its first ``revoked_at``); the key as it is now,
        or None when there is no such key."""
        ...

    def drop_key_subject(self, subject: str, at: datetime) -> list[ApiKey]:
        """Take ``subject`` (``TYPE:ID``) out of every key holding it, revoking at ``at`` a
        non-admin key left with none and dropping its name (which may name the subject); the
        keys changed, as they are now."""
        ...


class JobStore(Protocol):
    """Jobs of late HTTP writes (``Job``), shared by every server process on the store.

    - ``put_job`` stores a job, replacing the one with its id;
    - ``end_job`` stores a stored job's ending (True); an erased job stays gone;
    - ``get_job`` of an unknown or dropped id is None;
    - ``drop_jobs(before)`` deletes jobs created before ``before``, how many;
    - erasure deletes the subject's jobs (``jobs``): a result holds its facts.
    """

    def put_job(self, job: Job) -> None: ...

    def end_job(self, job: Job) -> bool: ...

    def get_job(self, job_id: str) -> Job | None: ...

    def drop_jobs(self, before: datetime) -> int: ...


@runtime_checkable
class MemoryStore(
    EpisodeStore,
    UnitStore,
    TimelineStore,
    AuditStore,
    ReviewStore,
    ErasureStore,
    BlockStore,
    ExchangeStore,
    KeyStore,
    JobStore,
    Protocol,
):
    """The source of truth: every port above, as the adapters implement it
    (``graphmem.adapters``). Every method that takes a scope is confined to it: no id from
    another scope is ever read, returned, changed or deleted."""
