"""``GraphMem``'s operator methods: erasure and lifecycle, export and import, API keys, the
schema, health checks and the index."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem.api.arguments import MAX_BATCH, Progress, SubjectLike, Time, as_scope
from graphmem.api.parts import Parts
from graphmem.domain.keys import matches, new_key, split, subject_name
from graphmem.domain.models import ApiKey, Job, MemoryUnit, utcnow
from graphmem.errors import InvalidInput, NotFound
from graphmem.llm import client as openai_api
from graphmem.pipelines import bulk as bulk_load
from graphmem.pipelines import exchange, export_check, health, lifecycle

#: How long a job of a late write is kept (``GraphMem.save_job``).
JOBS_KEPT = timedelta(days=1)


class Operating(Parts):
    """Erasure, deletion, archive and trace retention; export and import; keys; the database."""

    def forget(
        self,
        subject: SubjectLike,
        project: str | None = None,
        batch: int = 1_000,
        progress: Progress = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """Erase everything of a subject (all its projects unless ``project`` is given): episodes,
        units, entities, decisions, traces, blocks, review items.

        - Returns the erasure receipt: its id, ``actor``, counts per kind, ``revoked_keys``.
        - Erasing a whole subject first takes it out of every API key: a key that held only it
          is revoked.
        - No cache keeps its texts after, and the database pushes them out of its transaction
          logs (docs/security.md, "Erasure on disk").
        """
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
        """Bring archived units back into search; how many were."""
        return lifecycle.restore(self.store, as_scope(subject, project), list(unit_ids))

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
        self,
        records: Iterable[Mapping[str, Any]] | export_check.Plan | bulk_load.Export,
        force: bool = False,
        progress: Progress = None,
        bulk: bool = False,
        checked: Progress = None,
    ) -> dict[str, Any]:
        """Import an export (JSON objects, a ``read_export`` plan, or an ``ExportFile``),
        checked whole first; records already stored are skipped, so a re-run completes what
        was cut short.

        - Returns the scope and counts per kind ``imported`` and ``skipped``; ``progress``
          counts records done, ``checked`` those a file's first pass checked.
        - Raises ``InvalidInput`` for a bad record, ``Conflict`` for a key held elsewhere or a
          subject erased here (unless ``force``).
        - ``bulk``: into an empty subject, in large transactions (``pipelines.bulk``).
        """
        if isinstance(records, bulk_load.Export):
            if bulk:
                return bulk_load.load_export(self.store, self.index, records, force, progress, checked)
            records = export_check.read((where, data) for _, where, data in records.records())
        plan = (
            records
            if isinstance(records, export_check.Plan)
            else export_check.read((f"record {n}", r) for n, r in enumerate(records, 1))
        )
        if bulk:
            return bulk_load.load(self.store, self.index, plan, force, progress)
        return exchange.import_plan(self.store, self.index, plan, force, progress=progress)

    @staticmethod
    def read_export(records: Iterable[tuple[str, Any]]) -> export_check.Plan:
        """An export read and checked whole, nothing written, for ``import_``: its records as
        (where, JSON object) pairs, e.g. ``json_lines(lines, name)`` naming file lines.
        Raises ``InvalidInput`` starting with the bad record's where."""
        return export_check.read(records)

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

    # -- jobs of late writes -------------------------------------------------------------
    def save_job(self, job: Job) -> None:
        """Store a job of a write that outlived its HTTP request (again when it ends), for any
        server process on the database to answer its poll; jobs older than ``JOBS_KEPT`` go."""
        self.store.put_job(job)
        self.store.drop_jobs(utcnow() - JOBS_KEPT)

    def end_job(self, job: Job) -> bool:
        """Store a job's ending (``save_job``'s job done or failed); False when the job is no
        longer stored (its subject was erased while the write ran): it is not stored again."""
        return self.store.end_job(job)

    def job(self, job_id: str) -> Job | None:
        """A job ``save_job`` stored, or None (never stored, or older than ``JOBS_KEPT``)."""
        job = self.store.get_job(job_id)
        return job if job is not None and job.created_at >= utcnow() - JOBS_KEPT else None

    # -- the database ---------------------------------------------------------------------
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
