"""Endings are not corrections (issue 40), on every adapter family: what people say ends a fact
from then on and keeps its past; a correction says it never was; an operator can do either."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.domain.models import Fact, Op
from tests.conftest import fresh_scope


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def answers(mem, scope, question: str, day: str) -> list[str]:
    return [h.unit.content for h in mem.recall(question, scope, as_of=at(day))]


def test_no_longer_ends_a_job_from_then_and_keeps_its_past(mem):
    scope = fresh_scope()
    mem.remember("I work at Siemens.", scope, at=at("2026-09-01"))
    mem.remember("I no longer work at Siemens.", scope, at=at("2026-11-20"))
    assert answers(mem, scope, "where do I work?", "2026-10-15") == ["I work at Siemens."]
    assert "I work at Siemens." not in answers(mem, scope, "where do I work?", "2026-12-01")
    [ending] = mem.decisions(scope, op="UPDATE")
    assert ending.reason == "'I no longer work at Siemens.': 'I work at Siemens.' ends 2026-11-20"
    assert ending.invalid_at == at("2026-11-20") and ending.event.kind == "end"


def test_a_correction_says_the_fact_never_was(mem):
    scope = fresh_scope()
    mem.remember("I live in Lyon.", scope, at=at("2026-03-01"))
    mem.remember("Actually I never lived in Lyon, I was mistaken.", scope, at=at("2026-06-01"))
    for day in ("2026-04-01", "2026-07-01"):
        assert "I live in Lyon." not in answers(mem, scope, "where do I live?", day)
    [correction] = mem.decisions(scope, op="DELETE")
    assert correction.event.kind == "retract" and "I never lived in Lyon" in correction.reason


def test_an_ending_told_before_what_it_ends_still_ends_it(mem):
    scope = fresh_scope()
    ended = Fact(
        subject="Ken", predicate="lives_in", object="Paris", single_valued=True, op="end", invalid_at=at("2025-01-01")
    )
    mem.remember("Ken left Paris at new year.", scope, at=at("2025-02-01"), facts=[ended], extractor="facts")
    began = Fact(
        subject="Ken",
        predicate="lives_in",
        object="Paris",
        content="Ken lives in Paris",
        single_valued=True,
        valid_at=at("2024-03-01"),
    )
    mem.remember("Ken lives in Paris.", scope, at=at("2024-03-01"), facts=[began], extractor="facts")
    assert answers(mem, scope, "where does Ken live?", "2024-06-01") == ["Ken lives in Paris"]
    assert answers(mem, scope, "where does Ken live?", "2025-06-01") == []


def test_an_operator_ends_a_fact_at_a_time_and_what_was_before_stays(mem):
    scope = fresh_scope()
    mem.remember("I live in Graz.", scope, at=at("2024-01-01"))
    [graz] = mem.recall("where do I live?", scope)
    report = mem.end(graz.unit.id, scope, "moved out, told by phone", at=at("2025-05-01"))
    assert report.decisions[Op.UPDATE.value] == 1
    assert answers(mem, scope, "where do I live?", "2025-04-01") == ["I live in Graz."]
    assert answers(mem, scope, "where do I live?", "2025-06-01") == []
    [ending] = mem.decisions(scope, op="UPDATE")
    assert ending.reason.startswith("moved out, told by phone") and ending.policy == "operator"


def test_an_ending_at_the_first_instant_ends_nothing_and_says_so(mem):
    scope = fresh_scope()
    mem.remember("I live in Graz.", scope, at=at("2024-01-01"))
    [graz] = mem.recall("where do I live?", scope)
    report = mem.end(graz.unit.id, scope, "a typo in the date", at=datetime(1, 1, 1, tzinfo=UTC))
    assert report.decisions[Op.NOOP.value] == 1
    assert answers(mem, scope, "where do I live?", "2025-06-01") == ["I live in Graz."]
