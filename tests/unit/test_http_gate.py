"""The HTTP gate: a cap on work at once and on one caller's share of it, a bounded line whose
freed places go to the caller with the least running, and a timeout that drops what still
waits (it never runs) while work already running finishes on its thread. What needs no key
(readiness probes, a made-up key) never takes a place in it."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")

from starlette.testclient import TestClient

from graphmem.http import HttpConfig, create_app
from graphmem.http.errors import ApiError
from graphmem.http.guard import Gate


def test_work_waiting_past_the_timeout_never_runs_and_running_work_finishes():
    gate = Gate(concurrency=1, timeout=0.2, queue=5)
    release, ran = threading.Event(), []

    def slow() -> str:
        release.wait(5)
        ran.append("slow")
        return "slow"

    async def scenario() -> None:
        first = asyncio.ensure_future(gate.run(slow))
        await asyncio.sleep(0.02)
        with pytest.raises(ApiError) as waited:
            await gate.run(ran.append, "queued")
        assert (waited.value.status, waited.value.code) == (503, "timeout")
        assert waited.value.message.endswith("it did not start")
        with pytest.raises(ApiError) as gave_up:
            await first  # its caller gave up too; the work goes on, and the answer says so
        assert "it runs on and may finish" in gave_up.value.message
        release.set()
        assert await gate.run(lambda: "next") == "next"  # the slot came back once slow finished

    asyncio.run(scenario())
    gate.close()
    assert ran == ["slow"]


def test_a_full_line_is_refused_at_once():
    gate = Gate(concurrency=1, timeout=5, queue=0)
    release = threading.Event()

    async def scenario() -> None:
        first = asyncio.ensure_future(gate.run(release.wait, 5))
        await asyncio.sleep(0.02)
        began = time.monotonic()
        with pytest.raises(ApiError) as busy:
            await gate.run(lambda: None)
        assert (busy.value.status, busy.value.code) == (503, "busy") and time.monotonic() - began < 0.5
        assert busy.value.headers == {"Retry-After": "1"}
        release.set()
        assert await first is True

    asyncio.run(scenario())
    gate.close()


def test_at_most_the_cap_runs_at_once():
    gate = Gate(concurrency=2, timeout=5, queue=10)
    lock, running, peak = threading.Lock(), [0], [0]

    def work() -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1

    async def scenario() -> None:
        await asyncio.gather(*(gate.run(work) for _ in range(8)))

    asyncio.run(scenario())
    gate.close()
    assert peak[0] == 2


def test_a_flooding_caller_holds_its_share_and_another_starts_at_once():
    gate = Gate(concurrency=2, timeout=5, queue=20, share=1)
    release, started = threading.Event(), []

    def flood(n: int) -> None:
        started.append(n)
        release.wait(5)

    async def scenario() -> None:
        floods = [asyncio.ensure_future(gate.run(flood, n, who="a")) for n in range(5)]
        await asyncio.sleep(0.05)
        assert started == [0]  # one at a time: its share
        began = time.monotonic()
        assert await gate.run(lambda: "b", who="b") == "b" and time.monotonic() - began < 0.5
        release.set()
        await asyncio.gather(*floods)

    asyncio.run(scenario())
    gate.close()
    assert sorted(started) == list(range(5))


def test_a_freed_place_goes_to_the_caller_with_the_least_running():
    gate = Gate(concurrency=2, timeout=5, queue=20)
    releases = [threading.Event() for _ in range(2)]
    order: list[str] = []

    async def scenario() -> None:
        held = [asyncio.ensure_future(gate.run(r.wait, 5, who="a")) for r in releases]
        await asyncio.sleep(0.05)
        queued = [asyncio.ensure_future(gate.run(order.append, "a", who="a")) for _ in range(3)]
        await asyncio.sleep(0.05)
        queued.append(asyncio.ensure_future(gate.run(order.append, "b", who="b")))  # came last
        await asyncio.sleep(0.05)
        releases[0].set()
        await asyncio.gather(*held[:1])
        await asyncio.sleep(0.1)
        assert order[0] == "b"  # "a" still has one running, "b" none
        releases[1].set()
        await asyncio.gather(*held, *queued)

    asyncio.run(scenario())
    gate.close()
    assert sorted(order) == ["a", "a", "a", "b"]


def test_a_request_whose_client_goes_away_in_line_leaves_no_place_taken():
    gate = Gate(concurrency=1, timeout=5, queue=5)
    release = threading.Event()

    async def scenario() -> None:
        first = asyncio.ensure_future(gate.run(release.wait, 5))
        await asyncio.sleep(0.02)
        gone = asyncio.ensure_future(gate.run(lambda: "never"))
        await asyncio.sleep(0.02)
        gone.cancel()
        await asyncio.sleep(0.02)
        release.set()
        await first
        assert await asyncio.wait_for(gate.run(lambda: "next"), 1) == "next"

    asyncio.run(scenario())
    gate.close()


BLOCKS = "/v1/subjects/user%3Aalice/blocks"


def test_readiness_probes_check_once_and_keyed_work_never_waits_for_them(mem, monkeypatch):
    """50 probes at once (they need no key) run the checks once, beside the gate: a keyed
    request of a server with one worker is answered while the checks still run."""
    calls, release = [], threading.Event()
    checks = mem.doctor

    def slow_checks() -> dict:
        calls.append(1)
        release.wait(5)
        return checks()

    monkeypatch.setattr(mem, "doctor", slow_checks)
    _, token = mem.create_key(["user:alice"])
    with (
        TestClient(create_app(lambda: mem, HttpConfig(concurrency=1, timeout=5))) as client,
        ThreadPoolExecutor(50) as pool,
    ):
        probes = [pool.submit(client.get, "/readyz") for _ in range(50)]
        time.sleep(0.2)
        began = time.monotonic()
        keyed = client.get(BLOCKS, headers={"Authorization": f"Bearer {token}"})
        assert keyed.status_code == 200 and time.monotonic() - began < 1
        release.set()
        assert [p.result().json()["ok"] for p in probes] == [True] * 50
        assert client.get("/readyz").json()["ok"] is True  # the answer stands a few seconds
    assert len(calls) == 1


def test_a_made_up_key_is_refused_at_once_while_every_worker_is_busy(mem, monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(mem, "list_blocks", lambda *args, **kwargs: release.wait(5) and [])
    _, token = mem.create_key(["user:alice"])
    with (
        TestClient(create_app(lambda: mem, HttpConfig(concurrency=1, timeout=5))) as client,
        ThreadPoolExecutor(1) as pool,
    ):
        busy = pool.submit(client.get, BLOCKS, headers={"Authorization": f"Bearer {token}"})
        time.sleep(0.2)
        began = time.monotonic()
        for n in range(20):
            refused = client.get(BLOCKS, headers={"Authorization": f"Bearer gm_{n:012x}_made-up"})
            assert refused.status_code == 401, refused.text
        assert time.monotonic() - began < 2
        release.set()
        assert busy.result().json() == {"blocks": []}


def test_a_key_that_was_live_is_looked_up_beside_a_flood_of_made_up_keys(mem, monkeypatch):
    """Made-up keys whose lookups hang (a slow database, many of them) fill the lookup threads;
    a token that was live before is looked up on threads of its own, still checked each time."""
    release = threading.Event()
    real = mem.authenticate

    def slow_for_strangers(token: str):
        if "made-up" in token:
            release.wait(5)
        return real(token)

    monkeypatch.setattr(mem, "authenticate", slow_for_strangers)
    made, token = mem.create_key(["user:alice"])
    keyed = {"Authorization": f"Bearer {token}"}
    with (
        TestClient(create_app(lambda: mem, HttpConfig(concurrency=1, timeout=5))) as client,
        ThreadPoolExecutor(8) as pool,
    ):
        assert client.get(BLOCKS, headers=keyed).status_code == 200  # live once
        flood = [
            pool.submit(client.get, BLOCKS, headers={"Authorization": f"Bearer gm_{n:012x}_made-up"}) for n in range(8)
        ]
        time.sleep(0.2)
        began = time.monotonic()
        assert client.get(BLOCKS, headers=keyed).status_code == 200 and time.monotonic() - began < 1
        mem.revoke_key(made.id)
        assert client.get(BLOCKS, headers=keyed).status_code == 401  # revocation is still checked
        release.set()
        assert {f.result().status_code for f in flood} == {401}


def test_a_write_past_its_time_becomes_a_job_to_poll_not_a_503(mem, monkeypatch):
    release = threading.Event()
    ingest = mem.ingest

    def slow_ingest(*args, **kwargs):
        release.wait(5)
        return ingest(*args, **kwargs)

    monkeypatch.setattr(mem, "ingest", slow_ingest)
    _, token = mem.create_key(["user:alice"])
    _, other = mem.create_key(["user:alice"])
    auth = {"Authorization": f"Bearer {token}"}
    episodes = {"episodes": [{"raw": "Alice likes green tea.", "occurred_at": "2026-01-01T00:00:00Z"}]}
    with TestClient(create_app(lambda: mem, HttpConfig(timeout=0.3))) as client:
        answer = client.post("/v1/subjects/user%3Aalice/episodes", json=episodes, headers=auth)
        assert answer.status_code == 202 and answer.json()["status"] == "running"
        job = answer.headers["Location"]
        assert job == f"/v1/jobs/{answer.json()['id']}"
        assert client.get(job, headers={"Authorization": f"Bearer {other}"}).status_code == 404  # not its job
        release.set()
        for _ in range(50):
            polled = client.get(job, headers=auth).json()
            if polled["status"] != "running":
                break
            time.sleep(0.1)
        assert polled["status"] == "done" and polled["result"]["decisions"]["ADD"] == 1
        recalled = client.post("/v1/subjects/user%3Aalice/recall", json={"query": "green tea"}, headers=auth)
        assert recalled.json()["hits"][0]["content"] == "Alice likes green tea."
