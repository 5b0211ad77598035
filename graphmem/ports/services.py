"""The services the pipelines call out to: the policy that decides, the embedder, the reranker,
the extractors and the token counter."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from graphmem.domain.models import Candidate, Decision, Episode, MemoryUnit, WriteContext


class MemoryPolicy(Protocol):
    """Every "should we" decision. Implementations do no storage I/O and take ``now`` as an
    argument where time matters, so they are testable with plain tables."""

    name: str

    def should_write(self, candidate: Candidate, ctx: WriteContext) -> tuple[bool, str]:
        """Gate a candidate: (ok, reason). The reason is stored either way."""
        ...

    def reconcile(self, candidate: Candidate, neighbours: Sequence[MemoryUnit]) -> Decision:
        """Decide ADD/UPDATE/DELETE/NOOP against visible same-scope same-kind neighbours.
        A target_id must be one of the neighbours' ids; the reason is never empty."""
        ...

    def should_archive(self, unit: MemoryUnit, now: datetime) -> bool: ...

    def budget_for(self, label: str) -> int:
        """Token budget of a block label; ``"__recall__"`` is the recall budget."""
        ...

    def is_single_valued(self, candidate: Candidate) -> bool:
        """Whether the candidate's subject holds one value of its predicate at a time."""
        ...


class Embedder(Protocol):
    """Text to vectors. ``name`` and ``dimension`` are recorded in the database so a model
    change is detected. An embedder that caches by content also has ``clear_cache()``, which
    the index calls after an erasure."""

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, same order; [] for []. Deterministic."""
        ...


def query_prefix(embedder: Embedder) -> str:
    """What ``embedder`` puts before a question, not before a stored text: its optional
    ``query_prefix`` (bge's retrieval instruction), else ""."""
    prefix = getattr(embedder, "query_prefix", "")
    return prefix if isinstance(prefix, str) else ""


class Reranker(Protocol):
    """A question and texts to relevance scores: recall's optional second stage over its fused
    candidates (``graphmem.pipelines.rerank``)."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, same order, higher more relevant; [] for []. Deterministic: a
        text's score does not depend on the other texts."""
        ...


class Extractor(Protocol):
    """Episode to candidates. ``version`` is recorded on every unit it produces."""

    version: str

    def extract(self, episode: Episode) -> list[Candidate]:
        """Candidates in the episode's scope. May raise; the episode is already stored."""
        ...


class TokenCounter(Protocol):
    """Exact token counts for context budgets. ``name`` names the tokenizer."""

    name: str

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, budget: int) -> str:
        """The longest prefix of ``text`` (at a token boundary) with ``count <= budget``."""
        ...
