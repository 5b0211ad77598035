"""Recall statistics and archive state (Usage nodes) racing the deletion of their unit.

A usage write lands in the background (``UsageLog``) or from ``archive``, at any moment; an
episode deletion may commit between the write reading the unit and writing beside it. Either
order must leave no Usage node for a unit that is gone: one would be exported as a record
naming a missing unit (and refused on import) and would hand its counts and archive state to
a unit stored later under the same id. Each test holds one side's transaction open, starts
the other side in a thread, and commits the held side while the thread waits on it (or, when
it does not wait, after it), so whatever the order the locks allow, the outcome is checked.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from graphmem.adapters.neo4j.queries import load
from graphmem.adapters.neo4j.rows import scope_props
from graphmem.domain.models import Fact, RecallStats

from ..conftest import fresh_scope

pytestmark = pytest.mark.neo4j

AT = datetime(2024, 5, 1, tzinfo=UTC)


def usage_nodes(conn, unit_ids: list[str]) -> int:
    return conn.read_tx(
        lambda tx: tx.run("MATCH (s:Usage) WHERE s.unit_id IN $ids RETURN count(s) AS n", ids=unit_ids).single()["n"],
        what="count usage",
    )


def stored(mem, scope) -> tuple[str, list[str]]:
    """One episode and the unit it produced, which its deletion deletes."""
    report = mem.remember(
        "Ada lives in Paris.",
        scope,
        episode_id="ep-1",
        facts=[Fact(subject="Ada", predicate="lives_in", object="Paris")],
    )
    assert report.unit_ids
    return "ep-1", report.unit_ids


def in_thread(fn) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def body() -> None:
        try:
            fn()
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    thread = threading.Thread(target=body)
    thread.start()
    return thread, errors


USAGE_WRITES = {
    "recall": {"n": 1, "at": AT, "archive": False, "archived_at": None},
    "archive": {"n": 0, "at": None, "archive": True, "archived_at": AT},
}


@pytest.mark.parametrize("write", sorted(USAGE_WRITES))
def test_a_usage_write_held_open_while_its_unit_is_deleted_leaves_no_usage(index_mem, conn, write):
    scope = fresh_scope()
    episode_id, unit_ids = stored(index_mem, scope)
    rows = [{"id": i, **USAGE_WRITES[write]} for i in unit_ids]
    with conn.driver.session(database=conn.database) as session:
        tx = session.begin_transaction()
        tx.run(load("store/note_usage").text, rows=rows, scope_props=scope_props(scope)).consume()
        thread, errors = in_thread(lambda: index_mem.delete_episode(episode_id, scope))
        thread.join(timeout=2)  # the deletion waits for the usage write, or has committed
        tx.commit()
    thread.join(timeout=60)
    assert not thread.is_alive() and not errors, errors
    assert usage_nodes(conn, unit_ids) == 0


@pytest.mark.parametrize("write", sorted(USAGE_WRITES))
def test_a_usage_write_while_the_deletion_is_held_open_leaves_no_usage(index_mem, conn, write):
    scope = fresh_scope()
    episode_id, unit_ids = stored(index_mem, scope)
    with conn.driver.session(database=conn.database) as session:
        tx = session.begin_transaction()
        tx.run(load("store/delete_episode").text, id=episode_id, scope=scope.key).consume()

        def usage() -> None:
            if write == "recall":
                index_mem.store.record_recall(scope, {i: RecallStats(recalled_at=AT, increment=1) for i in unit_ids})
            else:
                index_mem.store.set_archived(scope, unit_ids, AT)

        thread, errors = in_thread(usage)
        thread.join(timeout=2)  # the usage write waits for the deletion, or has committed
        tx.commit()
    thread.join(timeout=60)
    assert not thread.is_alive() and not errors, errors
    assert usage_nodes(conn, unit_ids) == 0
