"""A deterministic feature-hashing embedder, for fast unit tests only."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=65_536)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    # blake2b, not hash(): Python's str hash is salted per process, and vectors must be stable.
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dimension, (1.0 if h >> 63 else -1.0)


class HashingEmbedder:
    """Feature hashing of lower-cased word unigrams and character trigrams into signed buckets.

    For tests, not for quality: texts sharing words or spellings land near each other, but there
    is no semantics. Deterministic across processes and machines; every vector is L2-normalised
    (a text with no features, e.g. "", hashes a fixed placeholder feature).
    """

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.name = f"hashing-{dimension}"

    def _features(self, text: str) -> list[str]:
        lowered = " ".join(text.lower().split())
        words = ["w:" + w for w in _WORD.findall(lowered)]
        padded = f" {lowered} "
        trigrams = ["c:" + padded[i : i + 3] for i in range(len(padded) - 2)] if lowered else []
        return words + trigrams or ["<empty>"]

    def clear_cache(self) -> None:
        """Forget the cached features (words and trigrams of texts embedded so far)."""
        _bucket.cache_clear()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector of length ``dimension`` per text, same order; [] for []."""
        out: list[list[float]] = []
        for text in texts:
            vec = [0.0] * self.dimension
            for feature in self._features(text):
                index, sign = _bucket(feature, self.dimension)
                vec[index] += sign
            norm = math.sqrt(sum(v * v for v in vec))
            if norm == 0.0:  # every feature cancelled out: fall back to the placeholder's bucket
                index, sign = _bucket("<empty>", self.dimension)
                vec[index], norm = sign, 1.0
            out.append([v / norm for v in vec])
        return out
