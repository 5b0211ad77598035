"""The JobStore contract and the facade's jobs, on every adapter family: a job is replaced by
id, read back whole, dropped by age, and erased with its subject (its result holds facts)."""

from __future__ import annotations

import uuid
from datetime import timedelta

from graphmem.api.operating import JOBS_KEPT
from graphmem.domain.models import Job, utcnow
from tests.conftest import fresh_scope


def test_a_job_is_replaced_by_id_and_read_back_whole(store):
    scope = fresh_scope(project="p")
    job = Job(id=uuid.uuid4().hex, owner="k1", scope=scope)
    store.put_job(job)
    assert store.get_job(job.id) == job
    ended = job.model_copy(
        update={"status": "done", "result": {"decisions": {"ADD": 1}, "units": ["Alice likes tea."]}}
    )
    store.put_job(ended.model_copy(update={"finished_at": utcnow()}))
    again = store.get_job(job.id)
    assert again.status == "done" and again.result == ended.result and again.scope == scope
    failed = job.model_copy(update={"status": "failed", "error_code": "conflict", "error_message": "busy"})
    store.put_job(failed)
    assert store.get_job(job.id) == failed
    assert store.get_job(uuid.uuid4().hex) is None


def test_jobs_are_dropped_by_age_only(store):
    now = utcnow()
    old = Job(id=uuid.uuid4().hex, owner="k", scope=fresh_scope(), created_at=now - timedelta(days=3))
    new = Job(id=uuid.uuid4().hex, owner="k", scope=fresh_scope(), created_at=now)
    store.put_job(old)
    store.put_job(new)
    assert store.drop_jobs(now - timedelta(days=2)) >= 1
    assert store.get_job(old.id) is None and store.get_job(new.id) == new


def test_the_facade_keeps_jobs_a_day_and_forget_erases_them(mem):
    scope, other = fresh_scope(), fresh_scope()
    mine = Job(id=uuid.uuid4().hex, owner="k", scope=scope, result={"units": ["Alice lives in Paris."]})
    theirs = Job(id=uuid.uuid4().hex, owner="k", scope=other)
    stale = Job(id=uuid.uuid4().hex, owner="k", scope=other, created_at=utcnow() - JOBS_KEPT - timedelta(minutes=1))
    for job in (mine, theirs, stale):
        mem.save_job(job)
    assert mem.job(mine.id) == mine and mem.job(stale.id) is None
    receipt = mem.forget(scope)
    assert receipt["jobs"] == 1
    assert mem.job(mine.id) is None and mem.job(theirs.id) == theirs


def test_an_ending_replaces_a_stored_job_only(store):
    job = Job(id=uuid.uuid4().hex, owner="k", scope=fresh_scope())
    ended = job.model_copy(update={"status": "done", "result": {"units": 1}, "finished_at": utcnow()})
    assert store.end_job(ended) is False and store.get_job(job.id) is None  # erased meanwhile: not again
    store.put_job(job)
    assert store.end_job(ended) is True and store.get_job(job.id) == ended
