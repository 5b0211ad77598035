"""The vectors an embedder computed lately, by the sha256 of their texts (an LRU, thread-safe).

A write embeds its units' contents for its neighbour search and again for their entries, and a
retried write does it again: the cache makes the second time free. ``graphmem.embed.bge`` uses
it; MiniLM keeps its own copy of the same logic until it moves here.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["VectorCache"]


class VectorCache:
    """At most ``size`` vectors, least recently used first out."""

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._rows: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], encode: Callable[[list[str]], Sequence[np.ndarray]]) -> list[list[float]]:
        """One vector per text, same order: cached ones as they are, the others from ``encode``
        (called once, with each missing text once)."""
        if not texts:
            return []
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for key in keys:
                row = self._rows.get(key)
                if row is not None:
                    self._rows.move_to_end(key)
                    found[key] = row
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in found:
                missing.setdefault(key, text)
        if missing:
            new = {key: np.array(row) for key, row in zip(missing, encode(list(missing.values())))}  # own memory
            found.update(new)
            with self._lock:
                self._rows.update(new)
                while len(self._rows) > self._size:
                    self._rows.popitem(last=False)
        return [found[key].tolist() for key in keys]

    def clear(self) -> None:
        """Forget every vector (after an erasure: the keys are the texts' hashes)."""
        with self._lock:
            self._rows.clear()
