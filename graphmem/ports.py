"""The ports: small Protocols the pipelines depend on, each with its written contract.

The store is split by concern (``EpisodeStore``, ``UnitStore``, ``TimelineStore``,
``AuditStore``, ``ReviewStore``, ``ErasureStore``, ``BlockStore``, ``ExchangeStore``,
``KeyStore``) so each pipeline names what it uses; ``MemoryStore`` is all of them, as the
adapters (``graphmem.adapters``) implement it on Neo4j and in memory. The contract suite in
``tests/contract`` runs the same tests against every adapter, and checks that each adapter has
every method of ``MemoryStore`` with its signature.

Visibility (docs/concepts.md, "Bi-temporal visibility"), used wherever a method takes ``at: AsOf``
(T = ``at.valid``, S = ``at.known``)::

    visible(u, T, S) :=  u.created_at <= S
                     and (u.valid_at is null or u.valid_at <= T)
                     and (u's own invalid_at is null or T < it)
                     and no invalidation edge e -> u with e.expired_at <= S
                                                  and (e.invalid_at is null or e.invalid_at <= T)

A returned unit shows ``expired_at`` = the earliest ``e.expired_at`` among edges with
``e.expired_at <= S`` and ``invalid_at`` = the earliest of its own end and those edges'
non-null ``invalid_at``: the unit as the system saw it at S.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, TypeVar, runtime_checkable

from graphmem.domain.models import (
    ApiKey,
    Appended,
    AsOf,
    AssembleTrace,
    Candidate,
    Decision,
    Deletion,
    Entity,
    Episode,
    Erasure,
    GroupUnit,
    IndexStatus,
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
    TextsRead,
    UnitEdges,
    UnitFilter,
    Usage,
    WriteBatch,
    WriteContext,
)

#: A stored record of one of the ``RecordKind`` kinds, as an export holds it.
Record = (
    Episode | Entity | MemoryUnit | Deletion | Decision | Invalidation | Usage | MemoryBlock | ReviewItem | StoredTrace
)

R = TypeVar("R", bound=Record)


def of(model: type[R], records: Iterable[tuple[str, Record]]) -> list[tuple[str, R]]:
    """Records of one kind, with where each was read, as that kind's model (``MODELS``)."""
    typed: list[tuple[str, R]] = []
    for where, record in records:
        if not isinstance(record, model):
            raise TypeError(f"a {type(record).__name__} among the {model.__name__} records")
        typed.append((where, record))
    return typed


def each(model: type[R], records: Iterable[Record]) -> list[R]:
    """``of`` without the where."""
    return [r for _, r in of(model, (("", r) for r in records))]


class EpisodeStore(Protocol):
    """Episodes: the raw events, append-only. An episode id belongs to its scope (another scope
    may use the same id).

    - storing an id its scope holds with the same fingerprint is a no-op; with another
      fingerprint the episode is reported, not stored;
    - an episode is deleted only by ``TimelineStore.delete_episode`` and by an erasure;
    - a new episode is stored undecided, and stays so until the commit that decides it
      (``WriteBatch.decided``): a write cut short in between (a crash, a lost server) leaves
      it undecided, for ``undecided_count`` to tell and ``undecided_episodes`` to complete.
      An import's episodes come with their decisions: never undecided.
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
        name (``graphmem.domain.mentions.runs_in``), each True when a fact is about it (found case-folded)
        and False when a text names it as a proper name or a speaker (found where capitalised):
        ``graphmem.domain.mentions.KnownNames``; with, read first in the same read, how many commits
        have made names known in the scope and the digest of the last one's names
        (``graphmem.domain.mentions.digest``; None before any), so a commit can tell whether the names
        changed since (``NamesRead``, ``UnitStore.commit``)."""
        ...

    def earlier_texts(self, scope: Scope, anchors: Sequence[tuple[str, bool]]) -> TextsRead:
        """The texts of the scope's units (archived ones too) that name one of ``anchors``
        (``WriteBatch.anchors``), by unit id, and those of its episodes, by episode id; more
        may be given (texts holding a name's words in order), never fewer. With, read first in
        the same read, how many changes to which texts a search finds the scope has seen (a
        commit with new units or episodes or restored units, an episode's deletion, an archive
        change, an import) and the key of the last one
        (``WriteBatch.texts_key``; None when no plan can know it), so a commit can tell whether
        they still stand (``TextsRead``, ``UnitStore.commit``)."""
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
        """Atomically store units, decisions (linked to their episode, target and product),
        invalidation edges and review items, after checking the batch's guards (``Conflict``
        when a guarded group's log has another length than ``group_state`` gave its writer; a
        unit id already stored is a ``Conflict`` too), with what derives from them: search
        entries, mention links (and links from earlier units and episodes to the names the
        batch makes known). All or nothing. ``NotFound`` when a decision names an episode the
        scope no longer holds (an erasure or deletion removed it after the write stored it):
        nothing derived from an erased episode may outlive it.

        A batch with guards, mention links or names holds the scope's names until it ends
        (taken before its guards are checked, so two writers of one group take turns), so the
        links of two writers never miss each other: the earlier units a batch links to its
        names are all those committed before it, and when ``batch.names_read`` says another
        writer made names known since the links were drawn, ``relink`` draws them again (with
        the names as now known) before anything is written; it bumps the names version
        when it makes names known. The earlier units and episodes are found among ``batch.texts_read``
        when that stands (``TextsRead.stands``), else searched in the commit; a batch with new
        units or episodes, or restored units, bumps the texts version."""
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
        """One page of the scope's records of one kind, as stored: those whose key comes after
        ``after`` ("" for the first page), in key order, and the key the next page starts after
        (None when this was the last). Keys are ids, except ``usage`` (its unit's id) and
        ``invalidation`` (the id of the decision: a page holds every edge of up to ``limit``
        decisions). A unit comes with its own end only (no edge-derived end, no usage), an
        episode without derived ids, a trace with its scores; search entries and entity words
        are derived, never records."""
        ...

    def lookup(self, scope: Scope, kind: RecordKind, keys: Sequence[str]) -> tuple[list[Record], set[str]]:
        """The scope's records of one kind with these keys (as ``dump`` gives them), and the
        keys a record of another scope holds (ids are unique in the whole database; nothing
        of that record is returned)."""
        ...

    def load(
        self, scope: Scope, records: Mapping[RecordKind, Sequence[Record]], derived: WriteBatch | None = None
    ) -> int:
        """Store records, of one or more kinds, exactly as given (ids, system times and all),
        all in one transaction, kind by kind in ``RECORD_KINDS`` order, with the links their
        fields name to records already stored or stored before them here (a link to a record
        that is not stored is left out, as it was where the records come from). Every record
        must be new (check with ``lookup``). Derived data is written with them: units get
        their entities and search entries, edges recompute their units' entries, archived
        usage takes its unit out of search, and for units and episodes ``derived`` gives the
        rest as ``commit`` takes it (``vectors`` and ``vector_model``; mention links, and
        ``anchors`` for texts stored before). Returns how many were stored."""
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
    Protocol,
):
    """The source of truth: every port above, as the adapters implement it
    (``graphmem.adapters``). Every method that takes a scope is confined to it: no id from
    another scope is ever read, returned, changed or deleted."""


@runtime_checkable
class MemoryIndex(Protocol):
    """Search over units, derived and rebuildable. Its entries (``graphmem.domain.entries``) are
    written by the store in the same transaction as the units and edges they derive from, so
    the index never lags the store; the index searches them and rebuilds them.

    - every search returns units of the request's scopes only, visible at its (T, S) and not
      archived, best first; a scope's k best come back however many other scopes and times the
      database holds;
    - lexical search treats the question as plain words: no query syntax, never raises on text;
    - an entity is named by a question when every word of its name is in the question ("Viktor
      Senvel" for "...did Viktor Senvel play..."); when none is, entities sharing a word are.
    """

    #: What turns text into vectors here; its name and dimension describe the index.
    embedder: Embedder

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """The embeddings of ``texts`` (what writes store with new units), in order."""
        ...

    def recall(self, request: SearchRequest) -> list[Scored]:
        """The best units: the semantic, lexical and named-entity lists (those the
        request asks for, each ``request.fetch`` deep), the time list when it names a window,
        and with ``request.words`` the speaker list (the candidates of those lists that someone
        the question names said: a unit whose text has them as a speaker mention, every word
        of the name in ``request.words``; tied), fused by reciprocal rank fusion
        (``graphmem.domain.fusion.rrf``), and with ``request.hops`` the units a walk from them reaches,
        ranked as ``graphmem.domain.fusion.walk`` ranks them (over this index's ``hop``); of those,
        the ``request.kept`` best once each gains for the others told in its conversation
        (``graphmem.domain.fusion.together``). The semantic,
        lexical and time lists read ``request.asked`` of those of ``request.names`` that speak
        in a text of the scopes (on Neo4j, found among 1,000 of a name's links: recall/asked).
        One round trip on Neo4j, walk included."""
        ...

    def hop(self, request: SearchRequest, step: Step) -> list[Reached]:
        """One hop of a walk (see ``Step``): units sharing an entity with the frontier, visible
        at the request's (T, S), at most ``request.fanout`` per entity, best first. An entity
        linked to more than ``fanout`` units, or named by the question (every word of its name
        in ``request.words``), is not walked through."""
        ...

    def search_semantic_many(self, queries: Sequence[str], scope: Scope, k: int, at: AsOf) -> list[list[Scored]]:
        """For each query, the k units nearest by meaning visible at ``at``."""
        ...

    def rebuild(self, scope: Scope | None = None, progress: Callable[[int], None] | None = None) -> int:
        """Recompute every entry from the store (one scope, or all) with the current embedder,
        telling ``progress`` how many more units are done; returns how many were indexed."""
        ...

    def clear_cache(self) -> None:
        """Drop every text (and vector of a text) kept outside the store: called after an
        erasure, so no cache holds an erased subject's words."""
        ...


class Database(Protocol):
    """The database behind a store and its index, as an operator sees it: schema, server and
    index health. A GraphMem over the in-memory adapters has none.

    Every method but ``migrate``, ``flush_erased`` and ``close`` only reads. Each raises
    ``Unavailable`` when the database cannot be reached.
    """

    def migrate(self) -> tuple[list[str], list[str]]:
        """Apply pending numbered schema migrations, then create the search indexes for the
        index's embedder (idempotent). Returns the migration names (applied now, already
        applied). Raises ``IndexMismatch`` when the index was built with another model."""
        ...

    def server(self) -> str:
        """Where the server is and what it runs, on one line."""
        ...

    def applied_migrations(self) -> list[str]:
        """Numbers of the migrations recorded as applied, in order."""
        ...

    def pending_migrations(self) -> list[str]:
        """Names of the migrations not applied yet, in order."""
        ...

    def stored_model(self) -> tuple[str, int] | None:
        """(model name, dimension) the index was built with; None on a fresh database."""
        ...

    def index_problems(self) -> list[str]:
        """One phrase per problem of the search layout: an unfinished rebuild, an index
        missing or not online, units without search entries; [] when there is none."""
        ...

    def flush_erased(self) -> bool:
        """After an erasure: push the deleted values out of the transaction logs
        (``graphmem.server.erasure.flush_erased``). True when the server checkpointed on
        request; False when it checkpoints on its own schedule (Community)."""
        ...

    def index_status(self) -> IndexStatus:
        """The model, dimension and generation the live search entries were built with, the
        model a rebuild builds aside, counts, and the state of each search index."""
        ...

    def close(self) -> None: ...


class MemoryPolicy(Protocol):
    """Every "should we" decision. Implementations do no storage I/O and take ``now`` as an
    argument where time matters, so they are testable with plain tables."""

    name: str

    def should_write(self, candidate: Candidate, ctx: WriteContext) -> tuple[bool, str]:
        """Gate a candidate: (ok, reason). The reason is stored either way."""
        ...

    def reconcile(self, candidate: Candidate, neighbours: Sequence[MemoryUnit]) -> Decision:
        """Decide ADD/UPDATE/DELETE/NOOP against visible same-scope same-kind neighbours.
        A target_id must be one of the neighbours' ids; the reason is never empty."""
        ...

    def should_archive(self, unit: MemoryUnit, now: datetime) -> bool: ...

    def budget_for(self, label: str) -> int:
        """Token budget of a block label; ``"__recall__"`` is the recall budget."""
        ...

    def is_single_valued(self, candidate: Candidate) -> bool:
        """Whether the candidate's subject holds one value of its predicate at a time."""
        ...


class Embedder(Protocol):
    """Text to vectors. ``name`` and ``dimension`` are recorded in the database so a model
    change is detected. An embedder that caches by content also has ``clear_cache()``, which
    the index calls after an erasure."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, same order; [] for []. Deterministic."""
        ...


class Extractor(Protocol):
    """Episode to candidates. ``version`` is recorded on every unit it produces."""

    version: str

    def extract(self, episode: Episode) -> list[Candidate]:
        """Candidates in the episode's scope. May raise; the episode is already stored."""
        ...


class TokenCounter(Protocol):
    """Exact token counts for context budgets. ``name`` names the tokenizer."""

    name: str

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, budget: int) -> str:
        """The longest prefix of ``text`` (at a token boundary) with ``count <= budget``."""
        ...
