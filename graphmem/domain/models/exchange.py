"""Whole subjects as records: the kinds an export holds, and the subjects there are to export."""

from __future__ import annotations

from typing import Literal, get_args

from graphmem.domain.models.base import Model
from graphmem.domain.models.scope import Scope

#: What an export holds, kind by kind, in the order it is written and imported: a record
#: names only records of its own kind or of the kinds before it.
RecordKind = Literal[
    "entity", "episode", "unit", "deletion", "decision", "invalidation", "usage", "block", "review", "trace"
]
RECORD_KINDS: tuple[RecordKind, ...] = get_args(RecordKind)


class SubjectCounts(Model):
    """A scope holding records, with how many episodes, units and decisions it holds."""

    scope: Scope
    episodes: int = 0
    units: int = 0
    decisions: int = 0
