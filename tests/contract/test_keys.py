"""The KeyStore contract and the facade's keys, on every adapter family: keys are stored as
digests, revocation is final, and erasing a subject takes it out of every key."""

from __future__ import annotations

import uuid

import pytest

from graphmem.domain.keys import digest, new_key, split
from graphmem.domain.models import Fact
from graphmem.errors import Conflict, InvalidInput, NotFound
from tests.conftest import fresh_scope
from tests.factories import EPOCH, day


def subject() -> str:
    scope = fresh_scope()
    return f"{scope.subject_type.value}:{scope.subject_id}"


def test_a_stored_key_is_its_digest_and_is_found_by_id(store):
    key, token = new_key([subject()], name="ci")
    store.put_key(key)
    key_id, secret = split(token)
    stored = store.get_key(key_id)
    assert stored == key and stored.digest == digest(secret) and secret not in stored.model_dump_json()
    assert key in store.list_keys()
    with pytest.raises(Conflict):
        store.put_key(key)
    assert store.get_key(uuid.uuid4().hex[:12]) is None


def test_revocation_keeps_the_first_time(store):
    key, _ = new_key([subject()])
    store.put_key(key)
    assert store.revoke_key(key.id, day(1)).revoked_at == day(1)
    assert store.revoke_key(key.id, day(2)).revoked_at == day(1)
    assert store.get_key(key.id).revoked_at == day(1)
    assert store.revoke_key(uuid.uuid4().hex[:12], day(1)) is None


def test_dropping_a_subject_revokes_only_keys_left_with_none(store):
    alice, bob = subject(), subject()
    only, both, admin = new_key([alice])[0], new_key([alice, bob])[0], new_key([alice], admin=True)[0]
    other = new_key([bob])[0]
    for key in (only, both, admin, other):
        store.put_key(key)
    changed = {k.id: k for k in store.drop_key_subject(alice, day(3))}
    assert set(changed) == {only.id, both.id, admin.id}
    assert (changed[only.id].subjects, changed[only.id].revoked_at) == ((), day(3))
    assert (changed[both.id].subjects, changed[both.id].revoked_at) == ((bob,), None)
    assert (changed[admin.id].subjects, changed[admin.id].revoked_at) == ((), None)  # admin holds all anyway
    assert store.get_key(other.id) == other
    assert store.drop_key_subject(alice, day(4)) == []


def test_the_facade_authenticates_live_keys_only(mem):
    alice = subject()
    key, token = mem.create_key([alice, alice], name="agent")
    assert key.subjects == (alice,)  # each subject once
    assert mem.authenticate(token) == key
    key_id, secret = split(token)
    for wrong in ("", "gm_x", f"gm_{key_id}_{secret}x", f"gm_{key_id[::-1]}_{secret}", token.replace("gm_", "xx_")):
        assert mem.authenticate(wrong) is None, wrong
    mem.revoke_key(key.id)
    assert mem.authenticate(token) is None
    with pytest.raises(NotFound):
        mem.revoke_key("nope")
    with pytest.raises(InvalidInput, match="at least one --subject"):
        mem.create_key([])
    with pytest.raises(InvalidInput, match="not TYPE:ID"):
        mem.create_key(["alice"])


def test_forget_takes_the_subject_out_of_keys_and_records_its_actor(mem):
    scope, other = fresh_scope(), fresh_scope()
    alice, bob = (f"{s.subject_type.value}:{s.subject_id}" for s in (scope, other))
    mem.remember(
        "I live in Paris.",
        scope,
        at=EPOCH,
        actor="tester",
        facts=[Fact(subject="Alice", predicate="lives_in", object="Paris", single_valued=True)],
    )
    only, only_token = mem.create_key([alice], name="Alice Smith's phone")
    both, both_token = mem.create_key([alice, bob], name="the family tablet")
    receipt = mem.forget(scope, actor="tester")
    assert receipt["actor"] == "tester" and receipt["units"] == 1 and receipt["revoked_keys"] == [only.id]
    assert mem.authenticate(only_token) is None
    assert mem.authenticate(both_token).subjects == (bob,)
    # a key left with no subject keeps nothing an operator wrote about it; one still in use does
    names = {k.id: k.name for k in mem.keys()}  # noqa: SIM118 (GraphMem.keys lists API keys: mem is no dict)
    assert (names[only.id], names[both.id]) == (None, "the family tablet")
    assert mem.forget(fresh_scope(), project="p")["revoked_keys"] == []


def test_every_write_records_its_actor(mem):
    scope = fresh_scope()
    for n, city in enumerate(("Paris", "Berlin", "Rome")):
        fact = Fact(subject="Alice", predicate="lives_in", object=city, single_valued=True, valid_at=day(10 * n))
        mem.remember(
            f"I live in {city}.",
            scope,
            at=day(10 * n),
            facts=[fact],
            actor=f"k{n}",
            episode_id=f"{scope.subject_id}:{n}",
        )
    assert {(d.episode_id, d.actor) for d in mem.decisions(scope)} == {
        (f"{scope.subject_id}:{n}", f"k{n}") for n in range(3)
    }
    deleted = mem.delete_episode(f"{scope.subject_id}:1", scope, actor="eraser")  # the middle of the chain
    assert deleted["actor"] == "eraser"
    rederived = [d for d in mem.decisions(scope) if d.deletion_id == deleted["deletion_id"]]
    assert rederived and {d.actor for d in rederived} == {"eraser"}
    assert mem.decisions(fresh_scope()) == []
