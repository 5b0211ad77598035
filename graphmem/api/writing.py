"""``GraphMem``'s writes: episodes in, reviews decided, facts retracted or ended, blocks set.

Every write takes ``actor``: who caused it ("cli", "mcp", an API key id), recorded on each
decision and deletion or erasure record it leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api.arguments import MAX_BATCH, Progress, SubjectLike, Time, as_scope
from graphmem.api.parts import Parts
from graphmem.domain.limits import TokenBudget
from graphmem.domain.models import Episode, Fact, MemoryBlock, MemoryUnit, RawText, utcnow
from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.pipelines import bulk as bulk_load
from graphmem.pipelines.write import WritePipeline, WriteReport

#: Writes of undecided episodes ``complete`` reads at a time.
COMPLETE_WRITES = 20


class Writing(Parts):
    """Episodes, reviews, operators' retractions and endings, resident blocks."""

    def ingest(
        self,
        episodes: Iterable[Episode],
        extractor: str | None = None,
        actor: str | None = None,
        batch: int | None = None,
        on_write: Callable[[WriteReport, int], None] | None = None,
        bulk: bool = False,
        progress: Progress = None,
    ) -> WriteReport:
        """Write episodes in arrival order, one transaction per run of one scope's episodes.

        - At most ``batch`` episodes a write (default: the whole run).
        - An id its subject holds with other content is ``rejected``, by position.
        - ``on_write(report, n)`` follows each write of n episodes, in order (``rejected``
          positions within it): what it reported is stored and decided.
        - ``bulk``: into empty subjects, decided in memory, then loaded in large
          transactions (``pipelines.bulk``), ``progress`` told of each.
        """
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
        if not bulk:
            return self.writer.write_all(writes, extractor, actor, on_write)
        scopes = list(dict.fromkeys(w[0].scope for w in writes))
        for scope in scopes:
            bulk_load.refuse_unless_empty(self.store, scope)
        scratch = InMemoryStore()
        embedder = self.index.embedder
        # The record-by-record writes, on a store of their own: no database round trip each.
        writer = WritePipeline(scratch, InMemoryIndex(scratch, embedder), self.policy, self.extractors)
        report = writer.write_all(writes, extractor, actor, on_write)
        for scope in scopes:
            # Forced: an ingest writes to an erased subject as any write does.
            plan = bulk_load.plan_of(scratch, scope, scratch.tables.vectors, embedder.name)
            bulk_load.load(self.store, self.index, plan, force=True, progress=progress)
        return report

    def complete(
        self,
        subject: SubjectLike | None = None,
        project: str | None = None,
        extractor: str | None = None,
        on_write: Callable[[WriteReport, int], None] | None = None,
        actor: str | None = None,
    ) -> WriteReport:
        """Decide the undecided episodes (of one subject, or of all), as a re-run would.

        - Those a write stored but never committed the decisions of (a crash, a lost server;
          ``undecided`` counts them), written again write by write, without the input.
        - Idempotent; ``extractor`` and ``on_write`` as for ``ingest``. Run it when no write is
          under way: the episodes of a write in flight are undecided too.
        """
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

    def set_block(
        self,
        subject: SubjectLike,
        label: str,
        value: str,
        project: str | None = None,
        token_budget: TokenBudget | None = None,
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
