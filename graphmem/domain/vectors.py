"""Embedding vectors as the indexes keep them: of length 1, every component finite."""

from __future__ import annotations

import math
from collections.abc import Sequence


def unit_length(vector: Sequence[float]) -> list[float] | None:
    """The vector scaled to length 1 (cosine similarity does not see the scale), or None when
    it has no direction: all zero, or a component not finite. ``math.hypot`` scales as it
    sums, so components near the float range still have a length."""
    norm = math.hypot(*vector)
    if not norm or not math.isfinite(norm):
        return None
    return [x / norm for x in vector]
