"""Erasure records on Neo4j: keyed by HMAC under the database's secret, made once and shared
by every connection; migration 0013 rekeys records an earlier graphmem keyed by a plain hash,
so ``erased`` still knows those subjects and the guessable hash is gone."""

from __future__ import annotations

import hashlib
import importlib
import uuid

import pytest

from graphmem.adapters.neo4j.erasure import erasure_secret
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.domain.models import Scope, erasure_key

pytestmark = pytest.mark.neo4j

erasure_keys_migration = importlib.import_module("graphmem.adapters.neo4j.migrations.0013_erasure_keys")


def test_the_secret_is_made_once_and_keys_every_record(conn):
    secret = erasure_secret(conn)
    assert len(secret) == 32 and erasure_secret(conn) == secret
    scope = Scope.parse(f"user:{uuid.uuid4().hex[:12]}")
    record = Neo4jStore(conn).start_erasure("user", scope.subject_id, None)
    assert record.subject_hash == erasure_key(secret, f"user:{scope.subject_id}") and record.project_hash == ""
    assert Neo4jStore(conn).erased(scope)  # another store on the database finds it


def test_records_keyed_by_a_plain_hash_are_rekeyed(conn):
    alice, bob = (Scope.parse(f"user:{uuid.uuid4().hex[:12]}") for _ in range(2))
    plain = {s: hashlib.sha256(f"user:{s.subject_id}".encode()).hexdigest() for s in (alice, bob)}
    project = hashlib.sha256(b"p1").hexdigest()
    for scope, project_hash in ((alice, ""), (bob, project)):
        conn.driver.execute_query(
            "CREATE (:Erasure {id: $id, subject_hash: $hash, project_hash: $project, status: 'done', "
            "subject_type: 'user', units: 3})",
            id=uuid.uuid4().hex,
            hash=plain[scope],
            project=project_hash,
            database_=conn.database,
        )
    store = Neo4jStore(conn)
    assert not store.erased(alice)
    assert erasure_keys_migration.apply(conn) == []
    assert store.erased(alice) and store.erased(Scope.parse(f"user:{bob.subject_id}", "p1"))
    assert not store.erased(bob)  # only bob's project p1 was erased
    erasure_keys_migration.apply(conn)  # again: nothing left to rekey
    records, _, _ = conn.driver.execute_query(
        "MATCH (r:Erasure) WHERE r.subject_hash IN $plain OR r.project_hash = $project RETURN count(r) AS n",
        plain=list(plain.values()),
        project=project,
        database_=conn.database,
    )
    assert records[0]["n"] == 0 and store.erased(alice)
