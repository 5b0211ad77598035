"""LLM extractor: durable facts from an episode through any OpenAI-compatible chat model, with
strict JSON-schema structured output (``graphmem.llm.structured``); the schema is the
``_Facts`` model's own.

Output that is still invalid after the retries raises ``BackendError``; the write pipeline has
already stored the episode and records the failure as a NOOP decision with the reason.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, WithJsonSchema, field_validator

from graphmem.domain.models import Candidate, Episode, MemoryKind, Triple
from graphmem.domain.times import parse_time
from graphmem.llm.client import probe
from graphmem.llm.structured import strict_schema, structured

SCHEMA_NAME = "extracted_facts"

SYSTEM = """You extract durable memories from one message for a long-term memory store.
Return facts about the speaker or the subject that will still matter later: where they live or \
work, relationships, preferences, allergies, plans with dates, standing instructions. Skip \
greetings, small talk, questions and anything only true for this moment.
For each fact give:
- content: the fact as one standalone sentence (no "I"/"me": name the speaker);
- subject, predicate (snake_case, e.g. lives_in, works_at, likes, allergic_to), object (null if none);
- single_valued: true when the subject holds one value at a time (lives_in, works_at, name, ...);
- op: "assert" when the fact holds (or began); "end" when it was true and stopped ("no longer", \
"not any more", "quit", "left", "moved out of", "stopped", "used to", "until ..."): the past \
stays true; "retract" when the speaker corrects an earlier statement: it was never true \
("actually I never ...", "that's wrong", "I was mistaken"). A changed opinion ("I no longer think \
jazz is boring") is neither: it is an assertion about the new opinion, or nothing;
- valid_at: the ISO date (YYYY-MM-DD) the fact became true when the message says or implies it \
(resolve relative dates against the message date), else null; null for "end" and "retract";
- ended_at: for "end", the ISO date it stopped being true (resolved the same way; null: the \
message date), else null;
- kind: "semantic" (a fact), "episodic" (an event that happened), "procedural" (an instruction \
on how the assistant should behave);
- confidence: 0 to 1.
Return {"facts": []} when there is nothing durable."""


# One extracted fact: the reply's schema (through ``strict_schema``) and its validator. No
# docstring: it would become the schema's description, which the model reads.
class _Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str = Field(min_length=1, max_length=20_000, description="the fact as one standalone sentence")
    subject: str = Field(min_length=1, max_length=500, description="who or what the fact is about")
    predicate: str = Field(min_length=1, max_length=200, description="snake_case relation, e.g. lives_in")
    object: str | None = Field(None, max_length=500)
    single_valued: bool = Field(False, description="the subject holds one value at a time")
    # Asked for as a date string; the validator below makes it a datetime.
    valid_at: Annotated[datetime | None, WithJsonSchema({"type": ["string", "null"]})] = Field(
        None, description="ISO date the fact became true"
    )
    op: Literal["assert", "end", "retract"] = Field("assert", description="holds, stopped being true, or never was")
    ended_at: Annotated[datetime | None, WithJsonSchema({"type": ["string", "null"]})] = Field(
        None, description="ISO date an ended fact stopped being true"
    )
    kind: Literal["semantic", "episodic", "procedural"] = "semantic"
    confidence: float = 1.0

    @field_validator("content", "subject", "predicate", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.replace("\x00", "").strip() if isinstance(value, str) else value

    @field_validator("object", mode="before")
    @classmethod
    def _object(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.replace("\x00", "").strip()
            return value or None
        return value

    @field_validator("valid_at", "ended_at", mode="before")
    @classmethod
    def _date(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str):
            raise ValueError(f"{info.field_name} must be an ISO date string or null")
        return parse_time(value, info.field_name)

    @field_validator("confidence", mode="after")
    @classmethod
    def _clamp(cls, value: float) -> float:
        return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.5


class _Facts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    facts: list[_Fact]


FACTS_SCHEMA = strict_schema(_Facts)

_SELF = {"i", "me", "my", "myself", "speaker", "the speaker", "user", "the user"}


class LLMExtractor:
    """Episode to candidates with an LLM (see the module docstring)."""

    def __init__(self, client, model: str, attempts: int = 3):
        self.client = client
        self.model = model
        self.attempts = attempts
        self.version = f"llm-{model}-2"  # 2: endings and corrections

    def ready(self) -> None:
        """Raise ``BackendError`` at once when the endpoint does not answer (before a write)."""
        probe(self.client, "the llm extractor")

    def extract(self, episode: Episode) -> list[Candidate]:
        user = json.dumps(
            {
                "speaker": episode.scope.subject_id,
                "message_date": episode.occurred_at.date().isoformat(),
                "channel": episode.channel,
                "message": episode.raw,
            },
            ensure_ascii=False,
        )
        data = structured(
            self.client, self.model, SYSTEM, user, SCHEMA_NAME, FACTS_SCHEMA, attempts=self.attempts, validator=_Facts
        )
        return [self._candidate(_Fact.model_validate(f), episode) for f in data["facts"]]

    @staticmethod
    def _candidate(fact: _Fact, episode: Episode) -> Candidate:
        subject = episode.scope.subject_id if fact.subject.casefold() in _SELF else fact.subject
        predicate = re.sub(r"[\s-]+", "_", fact.predicate.strip().casefold())
        return Candidate(
            kind=MemoryKind(fact.kind),
            scope=episode.scope,
            content=fact.content,
            # An ending's time is when it stopped; when the fact began is another statement's.
            valid_at=None if fact.op == "end" else fact.valid_at,
            invalid_at=fact.ended_at if fact.op == "end" else None,
            op=fact.op,
            confidence=fact.confidence,
            triple=Triple(subject=subject, predicate=predicate, object=fact.object, single_valued=fact.single_valued),
        )
