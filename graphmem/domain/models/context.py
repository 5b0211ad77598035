"""What context assembly reads and leaves: resident blocks, and the trace of every assembly."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from graphmem.domain.limits import MAX_BLOCK_TOKENS
from graphmem.domain.models.base import Model, UTCDatetime, new_id, utcnow
from graphmem.domain.models.scope import Scope
from graphmem.domain.models.text import plain_text, unicode_text


class MemoryBlock(Model):
    """A resident block: always in context, never retrieved."""

    id: str = Field(default_factory=new_id)
    scope: Scope
    label: Annotated[str, AfterValidator(plain_text(100, "a block label"))]
    value: Annotated[str, AfterValidator(unicode_text)]
    token_budget: Annotated[int, Field(gt=0, le=MAX_BLOCK_TOKENS)]
    writable: bool = True
    description: Annotated[str, AfterValidator(unicode_text)] | None = None
    updated_at: UTCDatetime = Field(default_factory=utcnow)


class AssembleTrace(Model):
    id: str = Field(default_factory=new_id)
    scope: Scope
    query: str
    resident_ids: tuple[str, ...]
    recalled_ids: tuple[str, ...]
    tokens: int
    #: Approved procedural units loaded as rules (resident, like blocks).
    rule_ids: tuple[str, ...] = ()
    created_at: UTCDatetime = Field(default_factory=utcnow)


class StoredTrace(AssembleTrace):
    """A trace as stored: with the fused score of each recalled unit, by rank (None where the
    unit's link is gone with the unit)."""

    scores: tuple[float | None, ...] = ()
