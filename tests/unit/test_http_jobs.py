"""The jobs of late writes as a server process keeps them: a poll reads the stored job, so an
erased subject's job is gone from every process; a job erased while its write runs is not
stored again; a shutdown ends the jobs of its writes; a worker starts without Neo4j and drops
the gauges of workers that died."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("fastapi")

from starlette.testclient import TestClient

from graphmem.http import HttpConfig, create_app
from graphmem.http.metrics import IndexCollector, exposition
from graphmem.http.workers import forget_dead_workers, worker_app
from graphmem.settings.config import Settings

EPISODES = {"episodes": [{"raw": "Carol likes green tea.", "occurred_at": "2026-01-01T00:00:00Z"}]}
WRITE = "/v1/subjects/user%3Acarol/episodes"


def slowed(mem, monkeypatch) -> threading.Event:
    """Writes wait for the event (at most 5 s) before they run."""
    release, ingest = threading.Event(), mem.ingest

    def slow_ingest(*args, **kwargs):
        release.wait(5)
        return ingest(*args, **kwargs)

    monkeypatch.setattr(mem, "ingest", slow_ingest)
    return release


def polled(client, job: str, auth: dict, until: str = "done") -> dict:
    for _ in range(50):
        answer = client.get(job, headers=auth)
        if answer.status_code != 200 or answer.json()["status"] == until:
            return answer
        time.sleep(0.1)
    return answer


def test_an_erased_subjects_job_is_gone_from_the_process_that_ran_it(mem, monkeypatch):
    release = slowed(mem, monkeypatch)
    _, token = mem.create_key(["user:carol", "user:dave"])
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(lambda: mem, HttpConfig(timeout=0.2))) as client:
        job = client.post(WRITE, json=EPISODES, headers=auth).headers["Location"]
        release.set()
        assert polled(client, job, auth).json()["status"] == "done"
        mem.forget("user:carol")
        assert client.get(job, headers=auth).status_code == 404


def test_a_job_erased_while_its_write_runs_is_not_stored_again(mem, monkeypatch):
    release = slowed(mem, monkeypatch)
    _, token = mem.create_key(["user:carol", "user:dave"])
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(lambda: mem, HttpConfig(timeout=0.2))) as client:
        answer = client.post(WRITE, json=EPISODES, headers=auth)
        assert answer.status_code == 202
        mem.forget("user:carol")
        release.set()
        time.sleep(1)  # the write ends (and would store its job's ending)
        assert mem.job(answer.json()["id"]) is None
        assert client.get(answer.headers["Location"], headers=auth).status_code == 404


def test_a_shutdown_ends_the_jobs_of_its_running_writes(mem, monkeypatch):
    release = slowed(mem, monkeypatch)
    _, token = mem.create_key(["user:carol"])
    try:
        with TestClient(create_app(lambda: mem, HttpConfig(timeout=0.2))) as client:
            answer = client.post(WRITE, json=EPISODES, headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 202
        ended = mem.job(answer.json()["id"])
        assert ended.status == "failed" and "send the same episodes again" in ended.error_message
    finally:
        release.set()


def test_a_worker_starts_while_neo4j_is_unreachable_and_answers_503():
    settings = Settings.from_env(neo4j_uri="bolt://127.0.0.1:9", embedder="hashing")
    with TestClient(worker_app(settings, HttpConfig(auth=False, timeout=5))) as client:
        assert client.get("/healthz").status_code == 200
        assert client.post("/v1/subjects/user%3Acarol/recall", json={"query": "tea"}).status_code == 503


def test_a_dead_workers_unreachable_mark_leaves_the_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    mark = "from graphmem.adapters.neo4j.driver import DOWN; DOWN.set(1)"
    subprocess.run([sys.executable, "-c", mark], check=True, env={**os.environ})
    index = IndexCollector(lambda: {"indexes": []})
    assert b"graphmem_neo4j_unreachable 1.0" in exposition(index)
    forget_dead_workers()
    assert b"graphmem_neo4j_unreachable 1.0" not in exposition(index)
