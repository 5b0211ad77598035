"""What a write did: its ``WriteReport``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple


class ExtractionFailure(NamedTuple):
    """An episode whose extraction failed, and why (it is stored and decided: ``reextract``)."""

    episode_id: str
    reason: str


class Rejection(NamedTuple):
    """An episode not stored: its position in the episodes written, and why (one line)."""

    position: int
    reason: str


@dataclass
class WriteReport:
    """What a write did: episodes written and new, decisions by op, units written, extraction
    failures, review items held and guard conflicts met."""

    episodes: int = 0
    new_episodes: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    unit_ids: list[str] = field(default_factory=list)
    failed: list[ExtractionFailure] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)
    conflicts: int = 0
    rejected: list[Rejection] = field(default_factory=list)

    def merge(self, other: WriteReport) -> None:
        self.episodes += other.episodes
        self.new_episodes += other.new_episodes
        self.decisions.update(other.decisions)
        self.unit_ids += other.unit_ids
        self.failed += other.failed
        self.reviews += other.reviews
        self.conflicts += other.conflicts
        self.rejected += other.rejected
