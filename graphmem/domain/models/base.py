"""What every model shares: the frozen base model, aware UTC times, ids and paging.

A naive datetime is rejected at construction (``AwareDatetime``), so no layer below ever
guesses a zone; times are normalised to UTC.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Protocol, TypeVar

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationInfo

from graphmem.domain.limits import MAX_ROWS
from graphmem.domain.timeline import END_OF_TIME


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


#: The validation context of records read back (from a store, or an export being imported):
#: what was accepted when written is read as it was, though a later check would refuse it.
STORED = {"stored": True}


def is_stored(info: ValidationInfo) -> bool:
    """Whether a record is being read back (``STORED``) rather than given anew."""
    return bool((info.context or {}).get("stored"))


def _utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:  # year 1 at +14:00 is year 0 in UTC, year 9999 at -14:00 year 10000
        raise ValueError(f"{value.isoformat()} is outside the years 1..9999 once in UTC") from None


UTCDatetime = Annotated[AwareDatetime, AfterValidator(_utc)]


def _before_the_end(value: datetime | None, info: ValidationInfo) -> datetime | None:
    """A world time a fact gives: not ``END_OF_TIME``, which would read back as no time at all.
    Read back (``STORED``), a record keeps what it was stored with."""
    if value == END_OF_TIME and not is_stored(info):
        raise ValueError("9999-12-31T23:59:59.999999Z stands for no end: leave the time out")
    return value


WorldTime = Annotated[UTCDatetime, AfterValidator(_before_the_end)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class _Interval(Protocol):
    @property
    def valid_at(self) -> datetime | None: ...
    @property
    def invalid_at(self) -> datetime | None: ...


_I = TypeVar("_I", bound=_Interval)


def valid_before_invalid(record: _I) -> _I:
    """World time runs forward: a fact cannot stop being true before it starts."""
    if record.valid_at and record.invalid_at and record.invalid_at < record.valid_at:
        raise ValueError("invalid_at is before valid_at")
    return record


class AsOf(Model):
    """A point on both time axes: world time ``valid`` (T) and system time ``known`` (S)."""

    valid: UTCDatetime
    known: UTCDatetime

    @classmethod
    def now(cls) -> AsOf:
        t = utcnow()
        return cls(valid=t, known=t)


class Page(Model):
    offset: Annotated[int, Field(ge=0)] = 0
    limit: Annotated[int, Field(gt=0, le=MAX_ROWS)] = 100
