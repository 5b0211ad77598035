"""The HTTP gate: a cap on work at once, a bounded line, and a timeout that drops what still
waits (it never runs) while work already running finishes on its thread. What needs no key
(readiness probes, a made-up key) never takes a place in it."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")

from starlette.testclient import TestClient  # noqa: E402

from graphmem.http import HttpConfig, create_app  # noqa: E402
from graphmem.http.errors import ApiError  # noqa: E402
from graphmem.http.guard import Gate  # noqa: E402


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
    with TestClient(create_app(lambda: mem, HttpConfig(concurrency=1, timeout=5))) as client, \
            ThreadPoolExecutor(50) as pool:
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
    with TestClient(create_app(lambda: mem, HttpConfig(concurrency=1, timeout=5))) as client, \
            ThreadPoolExecutor(1) as pool:
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
    with TestClient(create_app(lambda: mem, HttpConfig(concurrency=1, timeout=5))) as client, \
            ThreadPoolExecutor(8) as pool:
        assert client.get(BLOCKS, headers=keyed).status_code == 200  # live once
        flood = [pool.submit(client.get, BLOCKS, headers={"Authorization": f"Bearer gm_{n:012x}_made-up"})
                 for n in range(8)]
        time.sleep(0.2)
        began = time.monotonic()
        assert client.get(BLOCKS, headers=keyed).status_code == 200 and time.monotonic() - began < 1
        mem.revoke_key(made.id)
        assert client.get(BLOCKS, headers=keyed).status_code == 401  # revocation is still checked
        release.set()
        assert {f.result().status_code for f in flood} == {401}
