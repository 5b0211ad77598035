"""Decisions a person can audit (issue 40), on every adapter family: each reason names the
facts the timeline actually changed, in the cases where arrival order and world order differ,
and every decision log row carries the text of the facts it produced and ended."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.domain.models import Fact, Op
from graphmem.faces import views
from tests.conftest import fresh_scope


def d(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def works(employer: str, valid: str) -> Fact:
    return Fact(
        subject="Maria",
        predicate="works_at",
        object=employer,
        content=f"Maria works at {employer}",
        single_valued=True,
        valid_at=d(valid),
    )


def write(mem, scope, employer: str, valid: str, eid: str | None = None) -> None:
    mem.remember(
        employer,
        scope,
        facts=[works(employer, valid)],
        extractor="facts",
        episode_id=f"{scope.subject_id}:{eid or employer}",
    )


def newest(mem, scope):
    return max(mem.decisions(scope), key=lambda x: (x.decided_at, x.id))


def test_a_value_before_the_current_one_names_what_bounds_it(mem):
    s = fresh_scope()
    write(mem, s, "Acme", "2019-01-01")
    write(mem, s, "Hooli", "2017-09-01")
    reason = newest(mem, s).reason
    assert reason == (
        "'Maria works at Hooli' holds from 2017-09-01; until 2019-01-01, where 'Maria works at Acme' begins"
    )


def test_a_value_between_two_names_the_one_it_ends_and_the_one_that_bounds_it(mem):
    s = fresh_scope()
    write(mem, s, "Acme", "2019-01-01")
    write(mem, s, "Initech", "2023-01-01")
    write(mem, s, "Globex", "2021-09-01")
    globex = newest(mem, s)
    assert globex.reason == (
        "'Maria works at Globex' holds from 2021-09-01: 'Maria works at Acme' ends then; "
        "until 2023-01-01, where 'Maria works at Initech' begins"
    )
    assert (globex.op, mem.fact_texts([globex], s)[globex.target_id]) == (Op.UPDATE, "Maria works at Acme")


def test_deleting_the_middle_of_a_chain_names_what_holds_again(mem):
    s = fresh_scope()
    for employer, valid in (("Acme", "2019-01-01"), ("Globex", "2021-01-01"), ("Initech", "2023-01-01")):
        write(mem, s, employer, valid)
    mem.delete_episode(f"{s.subject_id}:Globex", s)
    assert "'Maria works at Acme' now ends 2023-01-01, where 'Maria works at Initech' begins" in newest(mem, s).reason


def test_deleting_one_of_two_restatements_names_the_one_that_takes_over(mem):
    s = fresh_scope()
    write(mem, s, "Acme", "2019-01-01")
    write(mem, s, "Initech", "2023-01-01", "first")
    write(mem, s, "Initech", "2024-01-01", "again")
    mem.delete_episode(f"{s.subject_id}:first", s)
    reasons = [x.reason for x in mem.decisions(s)]
    assert any("'Maria works at Initech' holds from 2024-01-01" in r for r in reasons)
    assert any("'Maria works at Acme' now ends 2024-01-01, where 'Maria works at Initech' begins" in r for r in reasons)


def test_an_ending_and_a_correction_name_their_facts_and_every_row_carries_its_text(mem):
    s = fresh_scope()
    mem.remember("I work at Siemens.", s, at=d("2026-09-01"))
    mem.remember("I no longer work at Siemens.", s, at=d("2026-11-20"))
    mem.remember("I live in Lyon.", s, at=d("2026-03-01"))
    mem.remember("Actually I never lived in Lyon, I was mistaken.", s, at=d("2026-06-01"))
    found = mem.decisions(s)
    by_op = {x.op: x for x in found}
    assert by_op[Op.UPDATE].reason == "'I no longer work at Siemens.': 'I work at Siemens.' ends 2026-11-20"
    assert by_op[Op.DELETE].reason == (
        "retraction of 'Actually I never lived in Lyon, I was mistaken.': 'I live in Lyon.' was never true"
    )
    rows = views.decision_log(found, mem.fact_texts(found, s))
    assert {(r["op"], r["produced_fact"] or r["candidate"], r["target_fact"]) for r in rows} == {
        ("ADD", "I work at Siemens.", None),
        ("UPDATE", "I no longer work at Siemens.", "I work at Siemens."),
        ("ADD", "I live in Lyon.", None),
        ("DELETE", "Actually I never lived in Lyon, I was mistaken.", "I live in Lyon."),
    }
