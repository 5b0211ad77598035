"""Pipelined writes: the next batch is planned while the one before commits in a second thread.

A plan reads through ``CommitInFlight``, which waits for that commit before a read that would
see what it changes, so every batch is decided as if written after the one before
(docs/concepts.md, "Pipelined ingest"). ``Committer`` runs the commits, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from graphmem.domain.entries import unit_text
from graphmem.domain.mentions import digest, names_in
from graphmem.domain.models import Scope, TextsRead, WriteBatch
from graphmem.errors import Conflict
from graphmem.pipelines.write.batch import Batch
from graphmem.pipelines.write.report import Rejection, WriteReport
from graphmem.ports import TimelineStore


class CommitInFlight:
    """What the batch committing while the next one is planned changes, as that plan reads it.

    - ``wait_before`` a read of the commit's episodes' logs, its groups (its guards) or the
      search entries (when it adds, ends or unarchives units) waits for the commit;
    - ``known`` and ``texts`` add what it makes known and the texts of its new units to what the
      plan reads of the names and the texts.
    """

    def __init__(self, settle: Callable[[], None] | None = None, batch: Batch | None = None):
        self._settle = settle
        self._scope = batch.scope if batch else None
        self._ids = batch.ids if batch else frozenset()
        planned = batch.planned if batch else WriteBatch()
        self._guards = planned.guards.keys()
        self._search = bool(planned.units or planned.invalidations or planned.unarchive)
        self._anchors = planned.anchors
        self._units = planned.units
        self._texts_key = planned.texts_key

    @property
    def overlaps(self) -> bool:
        """Whether a commit of the same pipeline runs (or ran) while this plan is made."""
        return self._scope is not None

    def texts(self, scope: Scope, read: TextsRead) -> TextsRead:
        """``read`` (``UnitStore.earlier_texts``) with the commit's new units' texts in ``scope``
        and its key: those the read may have missed (``TextsRead.ahead``). Its episodes were
        stored before it was planned, so the read found them."""
        if scope != self._scope or self._texts_key is None:
            return read
        new = {u.id: unit_text(u.content, u.summary) for u in self._units}
        return read.model_copy(update={"ahead": self._texts_key, "found": {**read.found, **new}})

    def known(self, scope: Scope, texts: Collection[str]) -> dict[str, bool]:
        """The names the texts hold that the commit makes known in ``scope``, as
        ``UnitStore.known_names`` will read them once it is done."""
        if scope != self._scope:
            return {}
        return names_in(texts, dict(self._anchors))

    def names_digest(self, scope: Scope) -> str | None:
        """The digest of the names the commit makes known in ``scope`` (None: none)."""
        return digest(self._anchors) if scope == self._scope and self._anchors else None

    def wait_before(self, episodes: Collection[str] = (), guards: Collection[str] = (), search: bool = False) -> None:
        """Wait for the commit if a read of these episodes' logs, groups or the search entries
        would see what it changes."""
        if self._settle is None:
            return
        if not self._ids.isdisjoint(episodes) or not self._guards.isdisjoint(guards) or (search and self._search):
            settle, self._settle = self._settle, None
            settle()


NO_COMMIT_IN_FLIGHT = CommitInFlight()


class Committer:
    """Commits the batches of a write one at a time and in order.

    - All but the last commit in a second thread while the next batch is planned; the last
      (the only one of a one-batch write) when it is settled.
    - A batch a guard refused (another writer committed to one of its groups) is planned and
      committed again (``again``) when settled; ``retried`` says so: the batch planned
      meanwhile must be planned again too.
    """

    def __init__(
        self,
        store: TimelineStore,
        again: Callable[[Batch], None],
        on_write: Callable[[WriteReport, int], None] | None,
    ):
        self.store, self.again, self.on_write = store, again, on_write
        self.executor: ThreadPoolExecutor | None = None
        self.pending: tuple[Batch, Future[None] | None] | None = None
        self.retried = False
        self.report = WriteReport()
        self.settled = 0  # episodes of the batches settled

    def submit(self, batch: Batch, last: bool) -> None:
        if last:
            self.pending = (batch, None)
            return
        self.executor = self.executor or ThreadPoolExecutor(1, thread_name_prefix="graphmem-commit")
        # Shaped here, while the commit before runs: the commit thread is the write's critical path.
        batch.plan = self.store.stage(batch.planned, batch.scope)
        self.pending = (batch, self.executor.submit(self.store.commit, batch.planned, batch.scope, batch.relink))

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()

    def in_flight(self) -> CommitInFlight:
        """The pending commit, as the next plan reads it."""
        return CommitInFlight(self.settle, self.pending[0]) if self.pending else NO_COMMIT_IN_FLIGHT

    def settle(self) -> None:
        """Wait for the pending commit, if any, and report it."""
        if self.pending is None:
            return
        (batch, future), self.pending = self.pending, None
        try:
            future.result() if future else self.store.commit(batch.planned, batch.scope, batch.relink)
        except Conflict:
            batch.report.conflicts += 1
            self.retried = True
            self.again(batch)
        report = batch.committed()
        if self.on_write:
            self.on_write(report, batch.size)
        rejected = [Rejection(self.settled + r.position, r.reason) for r in report.rejected]
        self.report.merge(replace(report, rejected=rejected))
        self.settled += batch.size
