"""Recall statistics without slowing a read.

Every recall counts its hits in memory; a background thread writes the counts in one batched
write per scope every ``interval`` seconds, and ``flush`` writes them at once (the archive sweep
reads them, and a closing process must not lose them). A hot unit therefore costs one write per
interval, not one write lock per read. The statistics are operational state kept beside units
(``UnitStore.record_recall``); a failed write keeps its counts for the next flush.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from graphmem.domain.models import RecallStats, Scope
from graphmem.ports import UnitStore

log = logging.getLogger("graphmem.usage")


class Counted(NamedTuple):
    """Recalls of a unit not written yet: the latest, and how many times."""

    last: datetime
    times: int


class UsageLog:
    def __init__(self, store: UnitStore, interval: float = 2.0):
        self.store = store
        self.interval = interval
        self._lock = threading.Lock()
        self._pending: dict[Scope, dict[str, Counted]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, scope: Scope, unit_ids: Iterable[str], at: datetime) -> None:
        """Count one recall of each unit (not written yet)."""
        self._count(scope, {uid: Counted(at, 1) for uid in unit_ids})
        with self._lock:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="graphmem-usage", daemon=True)
                self._thread.start()

    def flush(self) -> None:
        """Write every pending count now."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for scope, counts in pending.items():
            try:
                self.store.record_recall(
                    scope, {uid: RecallStats(recalled_at=at, increment=n) for uid, (at, n) in counts.items()}
                )
            except Exception as exc:  # stats must never fail a read: keep them for the next flush
                log.warning("recall statistics not written yet: %s", exc)
                self._count(scope, counts)

    def _count(self, scope: Scope, counts: dict[str, Counted]) -> None:
        with self._lock:
            mine = self._pending.setdefault(scope, {})
            for uid, (at, n) in counts.items():
                last, m = mine.get(uid, Counted(at, 0))
                mine[uid] = Counted(max(last, at), m + n)

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.flush()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(self.interval)
            if not self._closed:
                self.flush()
