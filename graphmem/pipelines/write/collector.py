"""Python's collector during a many-batch ingest: full collections a tenth as often.

A full collection walks every object the process holds, and an ingest's caller often holds all
its episodes: in benchmarks/graphiti's shape (20k one-fact episodes held by the caller), 18 full
collections took 5.3 s of the client's 17.9 s of CPU; at ``FULL_COLLECTION_EVERY`` = 100, a
tenth as many, 0.8 s.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: How many collections of the collector's youngest but one generation an ingest lets pass
#: before a full one (Python's default: 10).
FULL_COLLECTION_EVERY = 100
_lock = threading.Lock()
_users = 0  # ingests running with FULL_COLLECTION_EVERY
_before = gc.get_threshold()  # the process's thresholds before the first of them


@contextmanager
def rare_full_collections() -> Iterator[None]:
    """Full collections every ``FULL_COLLECTION_EVERY`` while it runs; the thresholds the
    process had are restored when the last such ingest ends."""
    global _users, _before
    with _lock:
        if _users == 0:
            _before = gc.get_threshold()
            gc.set_threshold(*_before[:2], FULL_COLLECTION_EVERY)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                gc.set_threshold(*_before)
