"""Episodes a write stored but never decided (the write cut short between storing them and
committing their decisions: a kill -9, a lost server) are undecided: ``doctor`` counts them,
recall says it is incomplete, and ``GraphMem.complete`` decides them without the input, as a
re-run of the same input decides them. A failed extraction is no such thing: its NOOP decision
says why (``reextract`` tries again)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem import GraphMem
from graphmem.api.wiring import make_extractors
from graphmem.domain.models import Episode, Fact
from graphmem.errors import Unavailable
from graphmem.faces.views import recall as recall_view
from tests.conftest import NEO4J, fresh_scope
from tests.contract.test_pipelined_writes import HeldCommits, build, memory_of

AT = datetime(2024, 1, 1, tzinfo=UTC)


def lives(scope, id: str, city: str, year: int) -> Episode:
    fact = Fact(
        subject="Ann",
        predicate="lives_in",
        object=city,
        valid_at=datetime(year, 1, 1, tzinfo=UTC),
        single_valued=True,
    )
    return Episode(scope=scope, id=id, occurred_at=AT, raw=f"Ann lives in {city}.", facts=(fact,))


def file_of(scope) -> list[Episode]:
    """Four writes of two (``batch=2``). In each undecided write, the same slot from the same
    day twice: the later in the write wins, and its id sorts first, so only the write's own
    order decides it; the later write wins over the earlier."""
    return [
        lives(scope, "m1", "Lima", 2019),
        lives(scope, "m2", "Kyiv", 2020),
        lives(scope, "z3", "Rome", 2021),
        lives(scope, "a4", "Oslo", 2021),
        lives(scope, "z5", "Paris", 2021),
        lives(scope, "a6", "Bern", 2022),
        lives(scope, "m7", "Cork", 2023),
        lives(scope, "m8", "Riga", 2023),
    ]


def crashed(request, family: str) -> tuple[GraphMem, object, list[Episode]]:
    """A GraphMem whose second commit is lost, after an ingest of ``file_of`` it cut short:
    the first write is decided, the second and third stored undecided (the third was stored
    while the second committed), the fourth never stored. Its later commits go through."""
    mem, _ = build(request, family, lambda store: HeldCommits(store, fail=2, error=Unavailable("gone")))
    scope = fresh_scope()
    episodes = file_of(scope)
    with pytest.raises(Unavailable):
        mem.ingest(episodes, batch=2)
    return mem, scope, episodes


@pytest.mark.parametrize("family", ["memory", NEO4J])
def test_a_write_cut_short_leaves_undecided_episodes_that_complete_decides_as_a_rerun_would(request, family):
    mem, scope, episodes = crashed(request, family)
    assert mem.undecided(scope) == 4
    assert [[e.id for e in w] for w in mem.store.undecided_episodes(scope)] == [["z3", "a4"], ["z5", "a6"]]
    assert recall_view(mem.recall("where does Ann live?", scope))["incomplete"] == 4  # recall says it misses them
    total = mem.undecided()  # of every scope (on Neo4j, other tests' too)
    check = next(c for c in mem.doctor()["checks"] if c["check"] == "episodes")
    assert check["ok"] and check["detail"].startswith(f"{total} stored without their decisions")

    report = mem.complete(scope)
    assert report.episodes == 4 and report.unit_ids
    assert mem.undecided(scope) == 0 and mem.undecided() == total - 4
    assert "incomplete" not in recall_view(mem.recall("where does Ann live?", scope))
    assert mem.complete(scope).episodes == 0  # nothing left: idempotent

    # The same cut completed the old way, by the same input again: the same memory.
    again, rerun, stored = crashed(request, family)
    again.ingest(stored[:6], batch=2)
    assert memory_of(mem, scope) == memory_of(again, rerun)
    # The write never stored is what the input still holds: a re-run adds it, and only it.
    mem.ingest(episodes, batch=2)
    again.ingest(stored, batch=2)
    assert memory_of(mem, scope) == memory_of(again, rerun)


def test_a_failed_extraction_is_decided_not_undecided(mem):
    """The extractor's failure is the episode's decision (a NOOP saying why): nothing to
    complete, and recall is not incomplete for it."""

    class Broken:
        version = "broken-1"

        def extract(self, episode):
            raise RuntimeError("no model")

    broken = GraphMem(mem.store, mem.index, extractors={**make_extractors(), "broken": Broken()})
    scope = fresh_scope()
    report = broken.remember("Ann lives in Rome.", scope, extractor="broken")
    assert report.failed and report.decisions["NOOP"] == 1
    assert broken.undecided(scope) == 0 and broken.complete(scope).episodes == 0


def test_an_erased_subject_leaves_nothing_undecided(request):
    mem, scope, _ = crashed(request, "memory")
    mem.forget(scope)
    assert mem.undecided(scope) == 0 and mem.store.undecided_episodes(scope) == []
