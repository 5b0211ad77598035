"""Extractors: episode in, candidates out (``graphmem.ports.Extractor``).

- ``facts``: the structured facts given with the episode;
- ``rule``: common sentence patterns, no LLM (see ``rule.py`` for its limits);
- ``llm``: an OpenAI-compatible model with JSON-schema structured output;
- ``none``: the episode itself as one episodic unit.
"""

from __future__ import annotations

from graphmem.domain.models import Candidate, Episode, MemoryKind, Triple


class NoneExtractor:
    """The episode itself becomes one episodic unit."""

    version = "none-1"

    def extract(self, episode: Episode) -> list[Candidate]:
        return [
            Candidate(
                kind=MemoryKind.episodic,
                scope=episode.scope,
                content=episode.raw,
                valid_at=episode.occurred_at,
            )
        ]


class FactsExtractor:
    """Structured facts given with the episode become candidates one to one."""

    version = "facts-1"

    def extract(self, episode: Episode) -> list[Candidate]:
        return [
            Candidate(
                kind=f.kind,
                scope=episode.scope,
                content=f.text(),
                valid_at=f.valid_at,
                invalid_at=f.invalid_at,
                labels=f.labels,
                confidence=f.confidence,
                triple=Triple(subject=f.subject, predicate=f.predicate, object=f.object, single_valued=f.single_valued),
                op=f.op,
            )
            for f in episode.facts
        ]
