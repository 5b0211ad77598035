"""``GraphMem``: the one entry point an agent developer needs.

    from graphmem import GraphMem

    with GraphMem.connect() as mem:                       # local Neo4j, offline embedder
        mem.remember("I moved to Berlin last month.", subject="user:alice")
        for hit in mem.recall("where does alice live?", subject="user:alice"):
            print(hit.unit.content, hit.score)
        context = mem.assemble("plan my weekend", subject="user:alice").text

It is synchronous: every call is a handful of Neo4j round trips and the CLI, benchmarks and
MCP tools are synchronous too; an async facade would add a second code path to keep correct.

The faces (CLI, MCP) go through these methods only and render results with
``graphmem.faces.views``; what the facade is built from is chosen in ``graphmem.api.wiring``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, AwareDatetime, ConfigDict, Field, Strict, ValidationError, validate_call

from graphmem.adapters.tokens import TiktokenCounter
from graphmem.api import wiring
from graphmem.domain import timeline
from graphmem.domain.keys import matches, new_key, split, subject_name
from graphmem.domain.models import (
    MAX_QUERY_CHARS,
    ApiKey,
    AsOf,
    Decision,
    Episode,
    Fact,
    GroupUnit,
    MemoryBlock,
    MemoryKind,
    MemoryUnit,
    Op,
    Page,
    RawText,
    Scope,
    UnitFilter,
    Usage,
    normalise,
    utcnow,
)
from graphmem.errors import ConfigurationError, Conflict, GraphMemError, InvalidInput, NotFound, error_line, one_line
from graphmem.extract.llm import LLMExtractor
from graphmem.llm import client as openai_api
from graphmem.pipelines import exchange, health, lifecycle
from graphmem.pipelines import shapes as shapes  # the faces show a stored record as an export writes it
from graphmem.pipelines.assemble import Assembler, Assembly, Blocks
from graphmem.pipelines.recall import Recalled, Recaller
from graphmem.pipelines.usage import UsageLog
from graphmem.pipelines.write import WritePipeline, WriteReport, drawn
from graphmem.policy import BasePolicy, PolicyConfig
from graphmem.policy.rule import RulePolicy
from graphmem.ports import Database, Embedder
from graphmem.settings.config import Settings

if TYPE_CHECKING:
    from graphmem.ports import MemoryIndex, MemoryStore


def _asked(query: str) -> str:
    if not query.strip():
        raise ValueError("the question is blank")
    return query


SubjectLike = str | Scope
#: A time given to the facade: aware (a naive datetime is refused, never guessed as UTC).
Time = AwareDatetime | None
#: A question: every face takes the same (the CLI, MCP and HTTP alike); blank asks nothing.
Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS), AfterValidator(_asked)]
#: Kinds may be given as their names ("semantic") as well as ``MemoryKind`` values.
Kinds = Sequence[Annotated[MemoryKind, Strict(False)]]
#: Told how many more records a long operation has done.
Progress = Callable[[int], None] | None

#: Bounds of the counts a caller gives, far beyond any real use and well within the database's
#: 64-bit integers: a larger value is refused as bad input instead of overflowing down there.
MAX_OFFSET = 2**53
MAX_BATCH = 1_000_000
MAX_BUDGET = 10_000_000
#: Writes of undecided episodes ``complete`` reads at a time.
COMPLETE_WRITES = 20

#: Arguments are checked strictly against the annotations: ``k="5"`` is a caller's bug to
#: report, not a value to guess.
_ARGUMENTS = ConfigDict(strict=True, arbitrary_types_allowed=True)

C = TypeVar("C", bound=type)


def as_scope(subject: SubjectLike, project: str | None = None) -> Scope:
    if isinstance(subject, Scope):
        return subject
    try:
        return Scope.parse(subject, project)
    except ValueError as exc:
        raise InvalidInput(error_line(exc)) from None


def point_in_time(valid: datetime | None = None, known: datetime | None = None) -> AsOf:
    """(T, S) from optional aware datetimes; both default to now."""
    now = utcnow()
    return AsOf(valid=valid or now, known=known or now)


def _checked(cls: C) -> C:
    """Make every public method of ``cls`` check its arguments against its annotations and
    raise only ``GraphMemError``: a wrong type, a naive datetime or a bad value anywhere below
    (``ValueError``, pydantic's included) becomes ``InvalidInput`` with one line."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, _guarded(member))
    return cls


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    validated = validate_call(config=_ARGUMENTS)(method)
    names = list(inspect.signature(method).parameters)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return validated(*args, **kwargs)
        except GraphMemError:
            raise
        except ValidationError as exc:
            raise InvalidInput(_argument_error(method.__qualname__, names, exc)) from exc
        except ValueError as exc:
            raise InvalidInput(error_line(exc)) from exc

    return call


def _argument_error(qualname: str, names: list[str], exc: ValidationError) -> str:
    """One line naming the argument (by name, also when given by position) and what is wrong;
    a model's own error, raised inside the call, as ``error_line`` words it."""
    first = exc.errors(include_url=False)[0]
    loc = first["loc"]
    if exc.title == "ValidatorIterator":  # an item of an iterable argument, checked as it is read
        return one_line(f"item {loc[0]}: {first['msg']}")
    if exc.title != qualname:
        return error_line(exc)
    head = names[loc[0]] if isinstance(loc[0], int) else loc[0]
    # The argument and list positions in it, not the union member pydantic tried last.
    where = ".".join([str(head), *(str(p) for p in loc[1:] if isinstance(p, int))])
    message = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]  # as error_line
    return one_line(f"{where}: {message}")


@_checked
class GraphMem:
    """Temporal memory for one process: write, recall, assemble, audit."""

    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        policy: BasePolicy | None = None,
        settings: Settings | None = None,
        extractors: dict[str, Any] | None = None,
        shared: Scope | None = None,
        database: Database | None = None,
    ):
        """Compose the pipelines over a store and its index. ``GraphMem.connect`` builds them
        on Neo4j from settings; tests pass ``InMemoryStore``/``InMemoryIndex``. ``database``
        (the operator's view of the backend: migrations, health) is None in memory."""
        self.settings = settings or Settings()
        self.store = store
        self.index = index
        self.database = database
        self.policy = policy or RulePolicy(PolicyConfig())
        self.counter = TiktokenCounter()
        self.extractors = extractors or wiring.make_extractors()
        self.writer = WritePipeline(store, index, self.policy, self.extractors)
        self.recaller = Recaller(index, rrf_k=self.settings.rrf_k, weights=self.settings.list_weights)
        self.usage = UsageLog(store)
        self.assembler = Assembler(store, self.recaller, self.policy, self.counter, self.usage)
        self.blocks = Blocks(store, self.counter)
        self.shared = shared or Scope.parse("shared:global")

    @classmethod
    def connect(
        cls,
        settings: Settings | None = None,
        migrate: bool = True,
        embedder: Embedder | None = None,
        check_index: bool = True,
        **kwargs: Any,
    ) -> GraphMem:
        """Connect to Neo4j (``NEO4J_*`` settings, default: the local server), apply pending
        migrations, and check the index was built with this embedder (``settings.embedder``
        unless an Embedder object is given). Keyword arguments go to ``GraphMem(...)``.
        See ``graphmem.api.wiring.connect``."""
        return wiring.connect(settings, migrate=migrate, check_index=check_index, embedder=embedder, **kwargs)

    def close(self) -> None:
        self.usage.close()
        if self.database is not None:
            self.database.close()

    def __enter__(self) -> GraphMem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def scopes(self, subject: SubjectLike, project: str | None, include_shared: bool) -> list[Scope]:
        scope = as_scope(subject, project)
        return [scope, self.shared] if include_shared and scope != self.shared else [scope]

    # -- write ----------------------------------------------------------------------------
    # Every write takes ``actor``: who caused it ("cli", "mcp", an API key id), recorded on
    # each decision and deletion or erasure record it leaves.
    def ingest(
        self,
        episodes: Iterable[Episode],
        extractor: str | None = None,
        actor: str | None = None,
        batch: int | None = None,
        on_write: Callable[[WriteReport, int], None] | None = None,
    ) -> WriteReport:
        """Write episodes in arrival order, one transaction per run of one scope's episodes, at
        most ``batch`` of them (default: the whole run); the next write is planned while one
        commits. An episode whose id its subject already holds with other content is not
        stored: ``rejected`` names it by its position in ``episodes``, and the others are
        written. ``on_write(report, n)`` follows each write of n episodes, in order (positions
        in its ``rejected`` count within that write): after a failure, the episodes of the
        writes it reported are stored and decided."""
        if extractor is not None:
            self._ready(extractor)
        if batch is not None and not 1 <= batch <= MAX_BATCH:
            raise InvalidInput(f"batch must be between 1 and {MAX_BATCH}")
        writes: list[list[Episode]] = []
        for episode in episodes:
            last = writes[-1] if writes else None
            if last and last[0].scope == episode.scope and (batch is None or len(last) < batch):
                last.append(episode)
            else:
                writes.append([episode])
        return self.writer.write_all(writes, extractor, actor, on_write)

    def complete(
        self,
        subject: SubjectLike | None = None,
        project: str | None = None,
        extractor: str | None = None,
        on_write: Callable[[WriteReport, int], None] | None = None,
        actor: str | None = None,
    ) -> WriteReport:
        """Decide the undecided episodes (of one subject, or of all): those a write stored but
        never committed the decisions of, cut short by a crash or a lost server (``undecided``
        counts them). Each write's undecided episodes are written again as that write, as a
        re-run of its input would write them (``ingest`` skips what is decided), without the
        input; ``extractor`` as for ``ingest``. Idempotent: a second run finds nothing. Run it
        when no write is under way: the episodes of a write in flight are undecided too.
        ``on_write(report, n)`` as for ``ingest``."""
        if extractor is not None:
            self._ready(extractor)
        scope = as_scope(subject, project) if subject else None
        report = WriteReport()
        while writes := self.store.undecided_episodes(scope, limit=COMPLETE_WRITES):
            report.merge(self.writer.write_all(writes, extractor, actor, on_write))
        return report

    def undecided(self, subject: SubjectLike | None = None, project: str | None = None) -> int:
        """How many episodes of a subject (of all, without one) are stored undecided: what
        ``complete`` would decide."""
        return self.store.undecided_count([as_scope(subject, project)] if subject else None)

    def _ready(self, extractor: str) -> None:
        """Refuse an extractor that is unknown or not configured (InvalidInput), or whose
        endpoint does not answer (BackendError), before anything is written."""
        chosen = self.extractors.get(extractor)
        if chosen is None and extractor == "llm":
            raise InvalidInput(openai_api.missing_endpoint("the llm extractor", "llm"))
        if chosen is None:
            # llm too: it is one once an endpoint is configured (the refusal above says how)
            known = [*self.extractors, *(["llm"] if "llm" not in self.extractors else [])]
            raise InvalidInput(f"unknown extractor {extractor!r}: use {'|'.join(known)}")
        if isinstance(chosen, LLMExtractor):
            chosen.ready()

    def remember(
        self,
        text: RawText,
        subject: SubjectLike,
        at: Time = None,
        channel: str = "chat",
        facts: Sequence[Fact] = (),
        project: str | None = None,
        extractor: str | None = None,
        episode_id: str | None = None,
        actor: str | None = None,
    ) -> WriteReport:
        """Store one episode (text and optional structured facts) and what it teaches."""
        extra: dict[str, Any] = {"id": episode_id} if episode_id else {}
        episode = Episode(
            scope=as_scope(subject, project),
            occurred_at=at or utcnow(),
            raw=text,
            channel=channel,
            facts=tuple(facts),
            **extra,
        )
        report = self.ingest([episode], extractor, actor=actor)
        if report.rejected:
            raise Conflict(report.rejected[0][1])
        return report

    # -- read -----------------------------------------------------------------------------
    def recall(
        self,
        query: Query,
        subject: SubjectLike,
        k: int = 10,
        as_of: Time = None,
        known_at: Time = None,
        hops: int = 0,
        kinds: Kinds = (),
        include_shared: bool = False,
        project: str | None = None,
        mode: Literal["hybrid", "semantic", "lexical"] = "hybrid",
    ) -> Recalled:
        """The k best units visible at (as_of, known_at), best first; hops 0..3 walks entities.
        A time the question names ("in March 2021", "yesterday") is in ``.window`` of the result;
        with no ``as_of`` it decides what is visible: facts true at some point inside it."""
        if not 0 <= hops <= 3:
            raise InvalidInput("hops must be between 0 and 3")
        if not 1 <= k <= 1000:
            raise InvalidInput("k must be between 1 and 1000")
        at = point_in_time(as_of, known_at)
        scopes = self.scopes(subject, project, include_shared)
        hits = self.recaller.recall(query, scopes, k, at, hops, kinds, mode, fixed=as_of is not None)
        hits.incomplete = self.store.undecided_count(scopes)  # what the hits may miss
        now = utcnow()
        for scope in {h.unit.scope for h in hits}:
            self.usage.add(scope, [h.unit.id for h in hits if h.unit.scope == scope], now)
        return hits

    def assemble(
        self,
        query: Query,
        subject: SubjectLike,
        budget: int | None = None,
        as_of: Time = None,
        known_at: Time = None,
        include_shared: bool = False,
        project: str | None = None,
        hops: int = 0,
    ) -> Assembly:
        """Resident blocks plus recalled units within the recall budget; the trace is stored."""
        if budget is not None and not 0 <= budget <= MAX_BUDGET:
            raise InvalidInput(f"budget must be between 0 and {MAX_BUDGET}")
        at = point_in_time(as_of, known_at)
        return self.assembler.assemble(
            query, self.scopes(subject, project, include_shared), at, budget, hops=hops, fixed=as_of is not None
        )

    def explain(self, unit_id: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any]:
        """Provenance of a unit: its episode, extractor version, decisions, invalidations, the
        entities it is about or names (what walks go through), and those its episode names."""
        scope = as_scope(subject, project)
        unit = self.store.get_unit(unit_id, scope)
        if unit is None:
            raise NotFound(f"no unit {unit_id} in scope {scope}")
        episode = self.store.get_episode(unit.source.episode_id, scope)
        return {
            "unit": unit,
            "episode": episode,
            "decisions": self.store.list_decisions(scope, unit_id=unit_id),
            "entities": self.store.unit_entities(scope, unit_id),
            "episode_entities": self.store.episode_entities(scope, episode.id) if episode else [],
            **self.store.invalidations(unit_id, scope).model_dump(),
        }

    # -- review and re-extraction --------------------------------------------------------
    def reviews(
        self, subject: SubjectLike | None = None, project: str | None = None, status: str | None = "pending"
    ) -> list[Any]:
        """Candidates held for human review (all subjects when none is given)."""
        return self.store.list_reviews(as_scope(subject, project) if subject else None, status)

    def review(self, review_id: str, approve: bool, note: str | None = None, actor: str | None = None) -> WriteReport:
        """Approve (write it, past the gate) or reject a held candidate."""
        item = self.store.get_review(review_id)
        if item is None:
            raise NotFound(f"no review item {review_id}")
        if item.status != "pending":
            raise InvalidInput(f"review item {review_id} is already {item.status}")
        report = self.writer.approve(item, actor=actor) if approve else WriteReport()
        self.store.decide_review(review_id, "approved" if approve else "rejected", note)
        return report

    def reextract(
        self,
        subject: SubjectLike,
        extractor: str,
        project: str | None = None,
        progress: Progress = None,
        actor: str | None = None,
    ) -> WriteReport:
        """Re-run extraction over the subject's stored episodes with another extractor."""
        self._ready(extractor)
        return self.writer.reextract(as_scope(subject, project), extractor, progress=progress, actor=actor)

    # -- forgetting ---------------------------------------------------------------------
    def forget(
        self,
        subject: SubjectLike,
        project: str | None = None,
        batch: int = 1_000,
        progress: Progress = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """Erase everything of a subject (all its projects unless ``project`` is given):
        episodes, units, entities, decisions, traces, blocks, review items. Returns the erasure
        receipt: its id, ``actor``, counts per kind, and ``revoked_keys``. Then no cache outside
        the store keeps its texts, and a database pushes the erased values out of its transaction
        logs (``Database.flush_erased``); what stays on disk even so is in docs/security.md ("Erasure on
        disk").

        Erasing a whole subject first takes it out of every API key: a key that held only this
        subject is revoked, one that held several keeps the others."""
        if not 1 <= batch <= MAX_BATCH:
            raise InvalidInput(f"batch must be between 1 and {MAX_BATCH}")
        scope = as_scope(subject, project)
        revoked: list[str] = []
        if project is None:
            changed = self.store.drop_key_subject(subject_name(scope), utcnow())
            revoked = [k.id for k in changed if k.revoked_at is not None]
        receipt = lifecycle.forget(
            self.store, scope.subject_type.value, scope.subject_id, scope.project_id, batch, progress, actor=actor
        )
        self.index.clear_cache()
        if self.database is not None:
            self.database.flush_erased()
        return {**receipt, "revoked_keys": revoked}

    def delete_episode(
        self, episode_id: str, subject: SubjectLike, project: str | None = None, actor: str | None = None
    ) -> dict[str, Any]:
        """Remove one episode and what only it produced; what it invalidated is current again."""
        scope = as_scope(subject, project)
        result = lifecycle.delete_episode(self.store, self.index, scope, episode_id, actor=actor)
        if result is None:
            raise NotFound(f"no episode {episode_id} in scope {scope}")
        return result

    def archive(
        self, subject: SubjectLike | None = None, project: str | None = None, dry_run: bool = False, now: Time = None
    ) -> dict[str, list[MemoryUnit]]:
        """Archive what the policy's should_archive picks, per scope (all scopes without a subject)."""
        scopes = [as_scope(subject, project)] if subject else self.store.list_scopes()
        at = now or utcnow()
        self.usage.flush()  # the sweep reads recall statistics
        return {str(s): lifecycle.archive(self.store, self.policy, s, at, dry_run) for s in scopes}

    def restore(self, unit_ids: Sequence[str], subject: SubjectLike, project: str | None = None) -> int:
        return lifecycle.restore(self.store, as_scope(subject, project), list(unit_ids))

    def retract(
        self, unit_id: str, subject: SubjectLike, reason: str, project: str | None = None, actor: str | None = None
    ) -> WriteReport:
        """Retract a fact on an operator's word: a DELETE decision with ``reason``, drawn
        through the unit's timeline as any retraction (what it had ended holds again); the
        fact stays in history (``WritePipeline.retract``). Raises ``NotFound``."""
        return self.writer.retract(
            self._operated(unit_id, subject, project, reason, "is retracted"), reason, actor=actor
        )

    def end(
        self,
        unit_id: str,
        subject: SubjectLike,
        reason: str,
        at: Time = None,
        project: str | None = None,
        actor: str | None = None,
    ) -> WriteReport:
        """End a fact on an operator's word: true until ``at`` (default now) and no longer,
        unlike ``retract`` (never true); an UPDATE decision with ``reason``, drawn through the
        unit's timeline (``WritePipeline.end``). Raises ``NotFound``."""
        return self.writer.end(
            self._operated(unit_id, subject, project, reason, "ended"), at or utcnow(), reason, actor=actor
        )

    def _operated(self, unit_id: str, subject: SubjectLike, project: str | None, reason: str, what: str) -> MemoryUnit:
        """The unit an operator's retraction or ending is about, once its reason is given."""
        scope = as_scope(subject, project)
        if not reason.strip():
            raise InvalidInput(f"reason: say why the fact {what}")
        unit = self.store.get_unit(unit_id, scope)
        if unit is None:
            raise NotFound(f"no unit {unit_id} in scope {scope}")
        return unit

    def prune_traces(
        self,
        subject: SubjectLike | None = None,
        project: str | None = None,
        older_than_days: float | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Delete the assembly traces older than ``older_than_days`` (default: the
        ``trace_retention_days`` setting), of one subject or of all; with ``dry_run`` only
        count them. Returns ``{"traces": n, "before": time, "dry_run": bool}``."""
        days = older_than_days if older_than_days is not None else self.settings.trace_retention_days
        if days is None:
            raise InvalidInput("no trace retention: give --older-than DAYS or set GRAPHMEM_TRACE_RETENTION_DAYS")
        if not days > 0:  # NaN too
            raise InvalidInput(f"older than {days} days: give a positive number of days")
        try:
            before = (now or utcnow()) - timedelta(days=days)
        except OverflowError:  # older than the calendar reaches: no trace is
            before = datetime.min.replace(tzinfo=UTC)
        scope = as_scope(subject, project) if subject else None
        return {"traces": self.store.prune_traces(scope, before, dry_run), "before": before, "dry_run": dry_run}

    # -- whole subjects -------------------------------------------------------------------
    def subjects(self) -> list[dict[str, Any]]:
        """Every subject (with its project) holding episodes, units or decisions:
        ``{"scope": Scope, "episodes": n, "units": n, "decisions": n}`` in scope order."""
        return [dict(row) for row in self.store.subjects()]

    def export(self, subject: SubjectLike, project: str | None = None) -> Iterator[dict[str, Any]]:
        """Every record of a subject, header first, as JSON-ready dicts: one per line of JSON
        is the export format (``graphmem.pipelines.exchange``). Lossless on both time axes.

            with open("alice.jsonl", "w") as out:
                for record in mem.export("user:alice"):
                    out.write(json.dumps(record) + "\n")
        """
        scope = as_scope(subject, project)
        self.usage.flush()  # recall statistics counted but not written yet belong to the subject
        return exchange.export(self.store, scope)

    def import_(
        self, records: Iterable[Mapping[str, Any]] | exchange.Plan, force: bool = False, progress: Progress = None
    ) -> dict[str, Any]:
        """Import an export (its records as JSON objects, or an ``exchange.Plan`` already read,
        e.g. ``exchange.read(episodes_io.json_lines(lines, name))`` naming file lines): every
        record is validated before anything is written; records already stored are skipped, so
        importing twice changes nothing, and an import cut short completes when run again.
        Returns the scope and counts per kind ``imported`` and ``skipped``; ``progress`` is told
        how many records are done as they are.

        Raises:
            InvalidInput: a bad record (named ``record N``).
            Conflict: a key held by another record, or a subject erased here without ``force``.
        """
        plan = (
            records
            if isinstance(records, exchange.Plan)
            else exchange.read((f"record {n}", r) for n, r in enumerate(records, 1))
        )
        return exchange.import_plan(self.store, self.index, plan, force, progress=progress)

    def trace(self, trace_id: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any] | None:
        """A stored assembly trace with the blocks it loaded and the units it recalled (as
        they are now), or None when there is no such trace in the scope."""
        scope = as_scope(subject, project)
        trace = self.store.get_trace(trace_id, scope)
        if trace is None:
            return None
        blocks = {b.id: b for b in self.store.list_blocks(scope)}
        units = self.store.list_units(
            scope, UnitFilter(ids=trace.recalled_ids, include_expired=True), Page(limit=max(len(trace.recalled_ids), 1))
        )
        by_id = {u.id: u for u in units}
        return {
            "trace": trace,
            "resident": [blocks[i] for i in trace.resident_ids if i in blocks],
            "recalled": [by_id[i] for i in trace.recalled_ids if i in by_id],
        }

    def history(
        self,
        subject: SubjectLike,
        entity: str | None = None,
        unit_id: str | None = None,
        project: str | None = None,
        known_at: Time = None,
        include_expired: bool = False,
    ) -> list[dict[str, Any]]:
        """The bi-temporal timeline of an entity's facts, or of one unit and the units its
        decision superseded, as the system saw it at ``known_at`` (default now).

        With ``entity``, each slot (subject and predicate) is one timeline, ordered by world
        time: the units alive at ``known_at``, which never overlap within a single-valued slot;
        with ``include_expired`` also those known then but no longer believed (retracted, or
        replaced by a redrawn stretch), each showing when it expired.
        Each entry is a unit as seen then (valid_at/invalid_at on the world axis,
        created_at/expired_at on the system axis), its ``slot``, and the decisions that shaped
        it, oldest first."""
        scope = as_scope(subject, project)
        at = point_in_time(None, known_at)
        if unit_id:
            # What it superseded: the units its decision ended, and the one it updated (an
            # UPDATE that redrew a stretch ends no unit of its own: it names its target).
            made = self.store.list_decisions(scope, unit_ids=[unit_id], limit=10_000)
            ids = list(
                dict.fromkeys(
                    [
                        unit_id,
                        *(o.unit_id for o in self.store.invalidations(unit_id, scope).outgoing),
                        *(d.target_id for d in made if d.produced_id == unit_id and d.target_id),
                    ]
                )
            )
            records = [r for r in self.store.unit_records(scope, ids) if r.unit.time.created_at <= at.known]
            if not any(r.unit.id == unit_id for r in records):
                raise NotFound(f"no unit {unit_id} in scope {scope}")
        elif entity:
            found = self.store.units_naming(scope, entity)
            alive = {s.id for s in timeline.shown(drawn(found), at.known)}
            records = [
                r for r in found if r.unit.id in alive or (include_expired and r.unit.time.created_at <= at.known)
            ]
        else:
            raise InvalidInput("history needs a unit id or an entity name")
        decisions = self.store.list_decisions(scope, unit_ids=[r.unit.id for r in records], limit=10_000)
        entries = []
        for r in records:
            unit = seen_at(r, at.known)
            hung = {e.decision_id for e in r.edges if e.expired_at <= at.known}
            mine = sorted(
                (
                    d
                    for d in decisions
                    if d.decided_at <= at.known and (unit.id in (d.target_id, d.produced_id) or d.id in hung)
                ),
                key=lambda d: (d.decided_at, d.id),
            )
            entries.append({"unit": unit, "slot": slot_label(unit), "decisions": mine, **belief(r, at.known)})
        entries.sort(
            key=lambda e: (
                normalise(e["slot"]),
                e["unit"].time.valid_at or e["unit"].time.created_at,
                e["unit"].time.created_at,
                e["unit"].id,
            )
        )
        return entries

    # -- resident blocks ------------------------------------------------------------------
    def list_blocks(self, subject: SubjectLike, project: str | None = None) -> list[MemoryBlock]:
        """Every resident block of a subject."""
        return self.store.list_blocks(as_scope(subject, project))

    def get_block(self, subject: SubjectLike, label: str, project: str | None = None) -> MemoryBlock:
        """One block by label. Raises ``NotFound``."""
        scope = as_scope(subject, project)
        block = self.store.get_block(scope, label)
        if block is None:
            raise NotFound(f"no block {label!r} for {scope}")
        return block

    def set_block(
        self,
        subject: SubjectLike,
        label: str,
        value: str,
        project: str | None = None,
        token_budget: int | None = None,
        description: str | None = None,
        writable: bool | None = None,
        truncate: bool = False,
        admin: bool = False,
    ) -> MemoryBlock:
        """Create or replace a block within its token budget; a read-only block changes only
        with ``admin`` (see ``pipelines.assemble.Blocks.set``)."""
        return self.blocks.set(
            as_scope(subject, project),
            label,
            value,
            token_budget=token_budget,
            description=description,
            writable=writable,
            truncate=truncate,
            admin=admin,
        )

    def delete_block(self, subject: SubjectLike, label: str, project: str | None = None, admin: bool = False) -> None:
        """Delete a block; a read-only one only with ``admin``. Raises ``NotFound``."""
        self.blocks.delete(as_scope(subject, project), label, admin)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as budgets count them."""
        return self.counter.count(text)

    # -- audit ----------------------------------------------------------------------------
    def decisions(
        self,
        subject: SubjectLike,
        project: str | None = None,
        episode_id: str | None = None,
        op: str | Op | None = None,
        limit: int = 100,
    ) -> list[Decision]:
        """The decision log of a subject, newest first (one episode's, or one op's)."""
        if not 1 <= limit <= 10_000:
            raise InvalidInput("limit must be between 1 and 10000")
        try:
            chosen = Op(op.upper() if isinstance(op, str) else op) if op is not None else None
        except ValueError:
            raise InvalidInput(f"unknown op {op!r}: use {'|'.join(o.value for o in Op)}") from None
        return self.store.list_decisions(
            as_scope(subject, project), episode_id=episode_id, op=chosen.value if chosen else None, limit=limit
        )

    def fact_texts(
        self, decisions: Iterable[Decision], subject: SubjectLike, project: str | None = None
    ) -> dict[str, str]:
        """The text of every unit the decisions produced or targeted (ended, retracted,
        superseded), by unit id, so each row of a decision log can name its facts."""
        ids = sorted({i for d in decisions for i in (d.target_id, d.produced_id) if i})
        return {r.unit.id: r.unit.content for r in self.store.unit_records(as_scope(subject, project), ids)}

    def episodes(
        self, subject: SubjectLike, project: str | None = None, offset: int = 0, limit: int = 100
    ) -> list[Episode]:
        """A page of the subject's episodes, in the store's order."""
        scope = as_scope(subject, project)
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET}")
        try:
            page = Page(offset=offset, limit=limit)
        except ValueError as exc:
            raise InvalidInput(f"episodes page: {exc}") from None
        found = (self.store.get_episode(i, scope) for i in self.store.list_episode_ids(scope, page))
        return [e for e in found if e is not None]

    def unit(self, unit_id: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any]:
        """One unit as seen now (whether or not still believed) with its usage:
        ``{"unit": MemoryUnit, "usage": Usage}``. Raises ``NotFound``."""
        scope = as_scope(subject, project)
        self.usage.flush()  # the recall counts shown include those not written yet
        unit = self.store.get_unit(unit_id, scope)
        if unit is None:
            raise NotFound(f"no unit {unit_id} in scope {scope}")
        found, _ = self.store.lookup(scope, "usage", [unit_id])
        return {"unit": unit, "usage": found[0] if found else Usage(unit_id=unit_id, scope=scope)}

    def episode(self, episode_id: str, subject: SubjectLike, project: str | None = None) -> Episode:
        """One episode. Raises ``NotFound``."""
        scope = as_scope(subject, project)
        found = self.store.get_episode(episode_id, scope)
        if found is None:
            raise NotFound(f"no episode {episode_id} in scope {scope}")
        return found

    # -- API keys -------------------------------------------------------------------------
    def create_key(
        self, subjects: Sequence[str] = (), admin: bool = False, name: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new API key holding ``subjects`` (``TYPE:ID``; all of them with ``admin``): the
        stored record and the key itself, which is shown this once and never stored."""
        key, token = new_key(list(subjects), admin=admin, name=name)
        self.store.put_key(key)
        return key, token

    def keys(self) -> list[ApiKey]:
        """Every API key, revoked ones included, oldest first."""
        return self.store.list_keys()

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke an API key (at once, for every server using this database). Raises ``NotFound``."""
        key = self.store.revoke_key(key_id, utcnow())
        if key is None:
            raise NotFound(f"no key {key_id}")
        return key

    def authenticate(self, token: str) -> ApiKey | None:
        """The live key ``token`` is, or None (malformed, unknown, wrong secret or revoked)."""
        parts = split(token)
        if parts is None:
            return None
        key = self.store.get_key(parts[0])
        return key if matches(key, parts[1]) else None

    # -- operations -----------------------------------------------------------------------
    def _database(self) -> Database:
        if self.database is None:
            raise ConfigurationError("this GraphMem has no database (in-memory store): nothing to migrate or inspect")
        return self.database

    def init(self) -> dict[str, Any]:
        """Apply pending schema migrations and create the search indexes (idempotent):
        ``{"applied": [...], "already_applied": [...]}``."""
        applied, already = self._database().migrate()
        return {"applied": applied, "already_applied": already}

    def doctor(self) -> dict[str, Any]:
        """Every health check, failures included: ``{"ok", "checks": [{"check", "ok", "detail"}]}``."""
        settings = self.settings
        llm: Callable[[], tuple[bool, str]] | None = None
        if settings.policy == "llm" or "llm" in self.extractors:
            purpose = "the llm policy" if settings.policy == "llm" else "the llm extractor"

            def probe_llm() -> tuple[bool, str]:
                return True, openai_api.probe(openai_api.make_client(settings, purpose, "llm"), purpose)

            llm = probe_llm
        return health.doctor(self.database, self.index.embedder, self.counter, llm, self.store.undecided_count)

    def index_status(self) -> dict[str, Any]:
        """The index's model, the embedder's, counts and index states (``Database.index_status``)."""
        return self._database().index_status().model_dump()

    def stats(self) -> dict[str, Any]:
        """Counts of units and entities (all and searchable), the index model, migrations applied."""
        database = self._database()
        counts = database.index_status().model_dump(exclude={"indexes", "embedder"})
        return {**counts, "migrations": len(database.applied_migrations())}

    def rebuild_index(
        self, subject: SubjectLike | None = None, project: str | None = None, progress: Progress = None
    ) -> dict[str, Any]:
        """Recompute the derived index from the store with the current embedder (all, or one
        subject): ``{"units": n, "model", "dimension"}``."""
        scope = as_scope(subject, project) if subject else None
        done = self.index.rebuild(scope, progress=progress)
        embedder = self.index.embedder
        return {"units": done, "model": embedder.name, "dimension": embedder.dimension}


def slot_label(unit: MemoryUnit) -> str:
    """The slot a unit's fact fills, as written: subject and predicate ("" without a triple)."""
    return f"{unit.triple.subject} {unit.triple.predicate}" if unit.triple else ""


def belief(record: GroupUnit, known: datetime) -> dict[str, Any]:
    """How a stored unit was believed up to ``known``, so history says what recall says: an
    edge that only ends its world interval earlier leaves it believed (with the interval it
    was believed to have before, in ``earlier``); only an edge without a world end (withdrawn,
    or closed for a continuation) stops belief (``believed_until``). ``edges``: the raw edges."""
    edges = sorted((e for e in record.edges if e.expired_at <= known), key=lambda e: e.expired_at)
    closing = [e.expired_at for e in edges if e.invalid_at is None]
    earlier, end = [], record.unit.time.invalid_at
    for e in edges:
        if e.invalid_at is not None and (end is None or e.invalid_at < end):
            earlier.append({"until": e.expired_at, "invalid_at": end})
            end = e.invalid_at
    return {"believed_until": min(closing, default=None), "earlier": earlier, "edges": edges}


def seen_at(record: GroupUnit, known: datetime) -> MemoryUnit:
    """A stored unit as the system saw it at ``known``: ``expired_at`` the first edge known
    then, ``invalid_at`` the earliest of its own end and the ends those edges give."""
    edges = [e for e in record.edges if e.expired_at <= known]
    ends = [t for t in (record.unit.time.invalid_at, *(e.invalid_at for e in edges)) if t is not None]
    time = record.unit.time.model_copy(
        update={"expired_at": min((e.expired_at for e in edges), default=None), "invalid_at": min(ends, default=None)}
    )
    return record.unit.model_copy(update={"time": time})
