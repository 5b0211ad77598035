"""Several server processes on one database (issue 43): two `graphmem serve` processes, or one
with `--workers 2`. Writers send one subject's episodes through them at once with the typed
client while a reader recalls through them. After it: every acknowledged episode is stored once
and decided, and the subject's timelines at every probed world time are the reference model's
(tests/temporal_model.py). And a write that outlives its request is a job any worker answers.

The facts are assertions and endings with distinct valid times in each slot, whose outcome the
model defines whatever order they arrive in, so writes racing between the processes may land in
any order and the expected memory is still one."""

from __future__ import annotations

import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import httpx

from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.client import Client
from graphmem.domain.models import AsOf, Page, Scope, UnitFilter, utcnow
from tests.contract.test_temporal_machine import to_fact, value
from tests.neo4j.test_fair_share import subject_and_key
from tests.neo4j.test_http import ROOT, env
from tests.ports import serving
from tests.temporal_model import FactSpec, TemporalModel

pytestmark = pytest.mark.neo4j

WRITERS, EPISODES = 4, 40
SLOTS = [("Zed", "lives_in", True), ("Amy", "lives_in", True), ("Zed", "likes", False)]
OBJECTS = ("Rome", "Oslo", "Kyiv")
START = datetime(2000, 1, 1, tzinfo=UTC)


def plan(seed: int) -> list[tuple[str, datetime, tuple[FactSpec, ...]]]:
    """Episodes of one or two facts; each fact's time is its own day, so no two facts of a slot
    start at the same instant."""
    rng, day, out = random.Random(seed), 0, []
    for n in range(WRITERS * EPISODES):
        facts = []
        for _ in range(rng.randint(1, 2)):
            day += 1
            subject, predicate, single = rng.choice(SLOTS)
            at = START + timedelta(days=day)
            if rng.random() < 0.2:
                facts.append(FactSpec(subject, predicate, rng.choice(OBJECTS), single, None, end=at, op="end"))
            else:
                facts.append(FactSpec(subject, predicate, rng.choice(OBJECTS), single, at))
        out.append((f"two-servers-{seed}-{n}", START + timedelta(days=day), tuple(facts)))
    rng.shuffle(out)  # sent out of time order
    return out


SERVE = [sys.executable, "-m", "graphmem.cli.main", "serve"]
#: Two servers, or one server of two workers (each client's connection stays with one worker).
LAYOUTS = {"two servers": [SERVE, SERVE], "two workers": [[*SERVE, "--workers", "2"]]}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_server_processes_store_every_acknowledged_write_once_and_agree_with_the_model(conn, layout):
    subject, key = subject_and_key()
    scope = Scope.parse(subject)
    episodes = plan(seed=43)
    acknowledged: list[tuple[str, datetime, tuple[FactSpec, ...]]] = []
    lock, done = threading.Lock(), threading.Event()
    with ExitStack() as servers:
        ports = [
            servers.enter_context(serving(argv, "graphmem serve", env=env(), cwd=ROOT)).port for argv in LAYOUTS[layout]
        ]
        urls = [f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[-1]}"]

        def write(w: int) -> None:
            with Client(urls[0], key=key) as first, Client(urls[1], key=key) as second:
                for n, (eid, occurred, facts) in enumerate(episodes[w::WRITERS]):
                    via = (first, second)[(n + w) % 2]
                    via.remember(eid, subject, at=occurred, facts=[to_fact(f) for f in facts], episode_id=eid)
                    with lock:
                        acknowledged.append((eid, occurred, facts))

        def read() -> int:
            reads = 0
            with Client(urls[0], key=key) as first, Client(urls[1], key=key) as second:
                while not done.is_set():
                    (first, second)[reads % 2].recall("where does Zed live", subject, k=5)
                    reads += 1
            return reads

        with ThreadPoolExecutor(WRITERS + 1) as pool:
            reading = pool.submit(read)
            writes = [pool.submit(write, w) for w in range(WRITERS)]
            try:
                for w in writes:
                    w.result()
            finally:
                done.set()
            assert reading.result() > 0

    store = Neo4jStore(conn)
    assert len(acknowledged) == len(episodes)
    stored = store.list_episode_ids(scope, Page(limit=1000))
    assert sorted(stored) == sorted(eid for eid, _, _ in acknowledged)  # each once
    assert store.undecided_count([scope]) == 0
    model = TemporalModel()
    model.ingest(acknowledged, "facts-1")
    now = utcnow()
    for day in range(0, (WRITERS * EPISODES * 2) + 3, 7):
        t = START + timedelta(days=day, hours=12)
        listed = store.list_units(scope, UnitFilter(), Page(limit=1000), AsOf(valid=t, known=now))
        assert sorted(map(value, listed)) == sorted(model.values(t, model.step)), t


def test_a_late_write_is_a_job_every_worker_answers(conn):
    """Each request on a new connection, so the kernel hands them to either worker: a write past
    a short GRAPHMEM_HTTP_TIMEOUT is a job (202) whose every poll finds it, running or done."""
    subject, key = subject_and_key()
    late = {**env(), "GRAPHMEM_HTTP_TIMEOUT": "0.2"}
    auth = {"Authorization": f"Bearer {key}", "Connection": "close"}
    with serving([*SERVE, "--workers", "2"], "graphmem serve --workers 2", env=late, cwd=ROOT) as server:
        url = f"http://127.0.0.1:{server.port}"
        warm = 0  # both workers' first key lookups (a cold query plan) may take longer than 0.2 s
        for _ in range(100):
            warm = warm + 1 if httpx.get(f"{url}/v1/me", headers=auth, timeout=30).status_code == 200 else 0
            if warm == 10:
                break
        jobs = []
        for n in range(6):  # 500 episodes a request: longer than 0.2 s
            body = {
                "episodes": [
                    {"raw": f"Zed visited city {n}-{m}.", "occurred_at": "2026-01-02T00:00:00Z"} for m in range(500)
                ]
            }
            answer = httpx.post(f"{url}/v1/subjects/{subject}/episodes", json=body, headers=auth, timeout=30)
            assert answer.status_code in (200, 202), answer.text
            if answer.status_code == 202:
                jobs.append(answer.headers["Location"])
        assert jobs, "no write outlived 0.2 s: the test did not test jobs"
        deadline = time.monotonic() + 60
        while jobs and time.monotonic() < deadline:
            for job in list(jobs):
                polled = httpx.get(url + job, headers=auth, timeout=30)
                assert polled.status_code == 200, polled.text  # 404: another worker's job was not found
                assert polled.json()["status"] in ("running", "done"), polled.text
                if polled.json()["status"] == "done":
                    jobs.remove(job)
            time.sleep(0.1)
        assert not jobs, f"jobs still running after 60 s: {jobs}"
