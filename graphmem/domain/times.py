"""Times written as text (CLI options, MCP arguments, ingest files, model replies) to aware UTC
datetimes: the one parser every face uses.

ISO 8601 only: ``2021`` and ``2021-03`` are the start of that year or month (UTC),
``2021-03-01`` is midnight UTC that day, ``2021-03-01T12:00`` (no zone) is UTC,
``2021-03-01T12:00:00+02:00`` keeps its offset and comes back in UTC. Text is the only place a
missing zone is read as UTC; the Python API refuses naive datetimes.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from graphmem.errors import quoted

EXAMPLE = "e.g. 2021, 2021-03, 2021-03-01 or 2021-03-01T12:00:00+02:00"
_YEAR_OR_MONTH = re.compile(r"\d{4}(-(0[1-9]|1[0-2]))?")


def parse_time(text: str, name: str | None = None) -> datetime:
    """``text`` as an aware UTC datetime.

    Raises:
        ValueError: not an ISO 8601 string, or out of range once in UTC; the message quotes
            the text and starts with ``name: `` when a name is given (the option, argument or
            field it came from).
    """
    prefix = f"{name}: " if name else ""
    if not isinstance(text, str):
        raise ValueError(f"{prefix}a time is an ISO 8601 string ({EXAMPLE}), not {type(text).__name__}")
    try:
        value = datetime.fromisoformat(_whole(text.strip()))
    except ValueError:
        raise ValueError(f"{prefix}{quoted(text)} is not an ISO 8601 time ({EXAMPLE})") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC
        raise ValueError(f"{prefix}{quoted(text)} is outside the years 1..9999 once in UTC") from None


def _whole(text: str) -> str:
    """A year (``2021``) or a month (``2021-06``) as its first day, which ``fromisoformat``
    does not read; any other text unchanged."""
    if _YEAR_OR_MONTH.fullmatch(text):
        return text + ("-01-01" if len(text) == 4 else "-01")
    return text


def parse_optional_time(text: str | None, name: str | None = None) -> datetime | None:
    """``parse_time``, with None or blank text meaning "not given"."""
    if text is None or not text.strip():
        return None
    return parse_time(text, name)
