"""The JSON bodies the routes take, as Pydantic models: strict numbers and booleans, no
unknown field, times as ISO 8601 text read as the CLI reads them (``2021-03-01`` is midnight
UTC)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from graphmem.api import MAX_BUDGET
from graphmem.domain.keys import subject_name
from graphmem.domain.limits import Hops, K, TokenBudget
from graphmem.domain.models import MAX_QUERY_CHARS, Episode, MemoryKind, Scope
from graphmem.domain.times import parse_optional_time
from graphmem.faces.episode_lines import episode_from_value  # the CLI's lines, shared with ingest
from graphmem.http.context import TIME_SCHEMA


def _text_time(value: Any) -> Any:
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 string, e.g. 2021-03-01")
    return parse_optional_time(value)


TextTime = Annotated[datetime | None, BeforeValidator(_text_time)]
AsOf = Annotated[TextTime, Field(description="World time T, ISO 8601 (2021-03-01 is midnight UTC) [default: now].")]
KnownAt = Annotated[TextTime, Field(description="System time S: what was known then, ISO 8601 [default: now].")]
IncludeShared = Annotated[
    bool, Field(strict=True, description="Also read the shared:global scope (the key must hold it).")
]


#: Text as ``models.clean_text`` takes it: no NUL; and not blank.
PLAIN, WORDS = r"^[^\u0000]*$", r"^[^\u0000]*[^\s\u0000][^\u0000]*$"


class Body(BaseModel):
    # Numbers and booleans are strict: "5" or "yes" is a mistake to name, not to guess at.
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _integral(cls, value: Any) -> Any:
        # But JSON Schema's integers include 2.0: one is taken as 2 (no field of a body is a float).
        return int(value) if isinstance(value, float) and value.is_integer() else value


class EpisodesIn(Body):
    episodes: list[Any] = Field(
        description=(
            "Episode lines as `graphmem ingest` reads them, without `subject` (the path names it), at most "
            "GRAPHMEM_HTTP_MAX_EPISODES of them (else 413). A bad item is reported by its index; the others are stored."
        )
    )
    extractor: Literal["facts", "rule", "llm", "none"] | None = Field(
        None,
        description=(
            "[default: facts when an episode carries facts, else rule]; llm needs an endpoint (GRAPHMEM_LLM_*)."
        ),
    )


class RecallIn(Body):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=WORDS)
    k: K = 10
    as_of: AsOf = None
    known_at: KnownAt = None
    hops: Hops = 0
    kinds: list[MemoryKind] = Field(default_factory=list, description="Only these kinds.")
    include_shared: IncludeShared = False
    mode: Literal["hybrid", "semantic", "lexical"] = "hybrid"
    rerank: bool | None = Field(
        None,
        strict=True,
        description="Reorder the best candidates with the cross-encoder [default: GRAPHMEM_RERANK, off].",
    )


class AssembleIn(Body):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=WORDS)
    budget: int | None = Field(
        None,
        ge=0,
        le=MAX_BUDGET,
        strict=True,
        description="Token budget of the recalled section (0: blocks only) [default: the policy's].",
    )
    as_of: AsOf = None
    known_at: KnownAt = None
    hops: Hops = 0
    include_shared: IncludeShared = False


class BlockIn(Body):
    value: str = Field(pattern=PLAIN)
    token_budget: TokenBudget | None = Field(None, description="Required for a new block.")
    description: str | None = Field(None, max_length=1000, pattern=PLAIN)
    writable: bool | None = Field(None, strict=True, description="Change writability (admin key only).")
    truncate: bool = Field(False, strict=True, description="Cut a value over budget instead of refusing.")
    admin: bool = Field(False, strict=True, description="Change a read-only block (admin key only).")


class RetractIn(Body):
    reason: str = Field(min_length=1, max_length=2_000, pattern=WORDS, description="Why (not blank).")


class EndIn(RetractIn):
    at: str | None = Field(
        None, json_schema_extra=TIME_SCHEMA, description="When the fact stopped being true (ISO 8601) [default: now]."
    )


def episode_item(item: Any, scope: Scope) -> Episode:
    """One item of ``EpisodesIn.episodes`` as an Episode of ``scope``; ValueError if bad."""
    if isinstance(item, dict):
        if item.get("subject") not in (None, subject_name(scope)):
            raise ValueError(f"subject: the path names {subject_name(scope)}; leave it out of the episode")
        if item.get("project") not in (None, scope.project_id):
            raise ValueError("project: the query parameter names it; leave it out of the episode")
        item = {**item, "subject": subject_name(scope), "project": scope.project_id}
    return episode_from_value(item)
