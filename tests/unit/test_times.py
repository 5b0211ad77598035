"""The one parser of times written as text (``graphmem.domain.times``)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.times import parse_optional_time, parse_time

OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(moment=st.datetimes(timezones=OFFSETS))
def test_an_aware_iso_time_is_the_same_instant_in_utc(moment: datetime) -> None:
    parsed = parse_time(moment.isoformat())
    assert parsed == moment and parsed.utcoffset() == timedelta(0)


@given(day=st.dates())
def test_a_date_alone_is_midnight_utc(day: date) -> None:
    assert parse_time(day.isoformat()) == datetime(day.year, day.month, day.day, tzinfo=UTC)


@given(moment=st.datetimes())
def test_a_time_without_a_zone_is_utc(moment: datetime) -> None:
    assert parse_time(f" {moment.isoformat()} ") == moment.replace(tzinfo=UTC)


def test_z_is_utc() -> None:
    assert parse_time("2023-05-08T13:56:00Z") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize("text", ["yesterday", "2021-13-01", "01/03/2021", "", "2021-03-01T25:00"])
def test_bad_text_names_the_option(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_time(text, "--as-of")
    assert str(info.value).startswith(f"--as-of: {text!r} is not an ISO 8601 time")
    assert "\n" not in str(info.value)


def test_optional_time_treats_blank_as_not_given() -> None:
    assert parse_optional_time(None) is None and parse_optional_time("  ") is None
    assert parse_optional_time("2021-03-01") == datetime(2021, 3, 1, tzinfo=UTC)
