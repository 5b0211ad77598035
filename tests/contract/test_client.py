"""The facade's contract through the typed HTTP client (``graphmem.client``), on both adapter
families: on the in-memory one the app is served by uvicorn in a thread; on Neo4j by a real
``graphmem serve`` process over the test database. Each test writes through the client and
reads back through the client and the facade over the same store, so the two must agree.

Not over HTTP, hence not here: the operator calls (init, doctor, stats, rebuild_index, keys,
archive, prune_traces, reextract, review): the CLI's, with no route; ``ingest``'s ``batch``
and ``progress`` (a server-side tuning and a callback); ``forget``'s ``batch``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")

from graphmem.client import AsyncClient, Client
from graphmem.domain.models import Episode, Fact, MemoryBlock, Standing
from graphmem.errors import Conflict, InvalidInput, NotFound, ScopeViolation, Unauthorized, Unavailable
from tests.conftest import NEO4J, fresh_scope
from tests.factories import EPOCH
from tests.ports import free_port, serving

ROOT = Path(__file__).resolve().parents[2]


def _thread_server(mem, key_required: bool = True):
    import uvicorn

    from graphmem.http import HttpConfig, create_app

    port = free_port()
    app = create_app(lambda: mem, HttpConfig(auth=key_required))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module", params=["memory", NEO4J])
def backend(request):
    """(the facade over a store, the URL of a server over the same store, an admin key): one
    server per module and adapter family (a `graphmem serve` process takes seconds to start)."""
    from graphmem import GraphMem
    from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
    from graphmem.embed import HashingEmbedder

    if request.param == "memory":
        store = InMemoryStore()
        mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()))
        _, token = mem.create_key(admin=True, name="client tests")
        server, thread, url = _thread_server(mem)
        yield mem, url, token
        server.should_exit = True
        thread.join(10)
        return
    from graphmem.adapters.neo4j.admin import Neo4jDatabase
    from graphmem.adapters.neo4j.index import Neo4jIndex
    from graphmem.adapters.neo4j.store import Neo4jStore

    conn = request.getfixturevalue("conn")
    index = Neo4jIndex(conn, HashingEmbedder())
    index.ensure()
    mem = GraphMem(Neo4jStore(conn), index, database=Neo4jDatabase(conn, index))
    _, token = mem.create_key(admin=True, name="client tests")
    env = {**os.environ, "GRAPHMEM_EMBEDDER": "hashing"}  # the test index's embedder
    with serving([sys.executable, "-m", "graphmem.cli.main", "serve"], "graphmem serve", env=env, cwd=ROOT) as proc:
        yield mem, f"http://127.0.0.1:{proc.port}", token
    mem.usage.close()


@pytest.fixture
def mem(backend):
    return backend[0]


@pytest.fixture
def served(backend):
    return backend[1:]


@pytest.fixture
def client(served):
    url, token = served
    with Client(url, token, retry_for=2.0) as made:
        yield made


def fact(city: str, day: int, op: str = "assert") -> Fact:
    return Fact(
        subject="Alice",
        predicate="lives_in",
        object=city,
        single_valued=True,
        valid_at=EPOCH + timedelta(days=day),
        op=op,
    )


def test_writes_are_idempotent_by_episode_id_and_read_back_alike(client, mem):
    scope = fresh_scope()
    episodes = [
        Episode(
            id=f"e{n}", scope=scope, occurred_at=EPOCH + timedelta(days=n), raw=f"I live in {c}.", facts=(fact(c, n),)
        )
        for n, c in enumerate(["Paris", "Berlin", "Rome"])
    ]
    first = client.ingest(episodes)
    assert first.new_episodes == 3 and sum(first.decisions.model_dump().values()) == 3
    again = client.ingest(episodes)  # a retry of the same write stores nothing twice
    assert again.new_episodes == 0 and again.unit_ids == []
    assert client.complete(scope).episodes == 0  # nothing was left undecided
    assert [e.id for e in client.episodes(scope)] == [e.id for e in mem.episodes(scope)]
    assert client.episode("e1", scope) == mem.episode("e1", scope)
    with pytest.raises(Conflict, match="episode e1 already exists with different content"):
        client.remember("I live in Oslo.", scope, at=EPOCH, episode_id="e1")
    assert sorted(d.op.value for d in client.decisions(scope)) == sorted(d.op.value for d in mem.decisions(scope))
    assert [d.episode_id for d in client.decisions(scope, episode_id="e0")] == ["e0"]


def test_recall_on_both_time_axes_matches_the_facade(client, mem):
    scope = fresh_scope()
    for n, city in enumerate(["Paris", "Berlin"]):
        client.remember(f"I live in {city}.", scope, at=EPOCH + timedelta(days=n), episode_id=f"e{n}")
    learnt = datetime.now(UTC)
    client.remember("I live in Rome.", scope, at=EPOCH + timedelta(days=5), episode_id="e5")
    for as_of, known_at in [(None, None), (EPOCH + timedelta(hours=12), None), (None, learnt)]:
        over_http = client.recall("where do I live", scope, k=5, as_of=as_of, known_at=known_at)
        in_process = mem.recall("where do I live", scope, k=5, as_of=as_of, known_at=known_at)
        assert [(h.id, h.content) for h in over_http.hits] == [(h.unit.id, h.unit.content) for h in in_process]
    assembled = client.assemble("where do I live", scope)
    assert "Rome" in assembled.text and client.trace(assembled.trace.id, scope).trace == assembled.trace
    assert client.trace("no-such-trace", scope) is None


def test_listing_pages_match_the_facade(client, mem):
    scope = fresh_scope()
    for n, city in enumerate(["Paris", "Berlin", "Rome"]):
        client.remember(f"I live in {city}.", scope, at=EPOCH + timedelta(days=n), facts=[fact(city, n)])
    for status in ("current", "ended", "all"):
        pages, cursor = [], None
        while True:
            page = client.units(scope, status=status, cursor=cursor, limit=1)
            pages += [u.id for u in page.units]
            if (cursor := page.next_cursor) is None:
                break
        assert pages == [u.id for u in mem.units(scope, status=Standing(status).status, limit=50).units], status
    names = [e.name for e in client.entities(scope).entities]
    assert names == [e.name for e in mem.entities(scope).entities] and "Rome" in names
    assert [e.name for e in client.entities(scope, prefix="ro").entities] == ["Rome"]
    alice = client.entity("Alice", scope)
    assert [u.id for u in alice.facts] == [u.id for u in mem.entity("Alice", scope)["facts"]] and len(alice.facts) == 1
    with pytest.raises(NotFound):
        client.entity("Nobody", scope)


def test_history_explain_end_retract_and_delete(client, mem):
    scope = fresh_scope()
    client.ingest([Episode(id="e0", scope=scope, occurred_at=EPOCH, raw="I live in Paris.", facts=(fact("Paris", 0),))])
    client.ingest(
        [Episode(id="e1", scope=scope, occurred_at=EPOCH, raw="I live in Berlin.", facts=(fact("Berlin", 3),))]
    )
    history = client.history(scope, entity="Alice", include_expired=True)
    assert [e.content for e in history] == [
        e["unit"].content for e in mem.history(scope, entity="Alice", include_expired=True)
    ]
    current = next(e for e in history if e.believed and e.invalid_at is None)
    explained = client.explain(current.id, scope)
    assert explained.unit.id == current.id and explained.episode.id == "e1"
    ended = client.end(current.id, scope, "moved away", at=EPOCH + timedelta(days=9))
    assert ended.unit_id == current.id and ended.decisions.model_dump()["UPDATE"] == 1
    assert client.recall("where does Alice live", scope, as_of=EPOCH + timedelta(days=10)).hits == [] or all(
        "Berlin" not in h.content for h in client.recall("lives", scope, as_of=EPOCH + timedelta(days=10)).hits
    )
    retracted = client.retract(current.id, scope, "never true")
    assert retracted.decisions.model_dump()["DELETE"] == 1
    deleted = client.delete_episode("e1", scope)
    assert deleted.units >= 1
    with pytest.raises(NotFound):
        client.episode("e1", scope)
    with pytest.raises(NotFound):
        client.explain("no-such-unit", scope)


def test_blocks_errors_and_erasure(client, mem):
    scope = fresh_scope()
    with pytest.raises(InvalidInput, match="give its token budget"):
        client.set_block(scope, "persona", "Be brief.")
    made = client.set_block(scope, "persona", "Be brief.", token_budget=10, writable=False)
    assert isinstance(made, MemoryBlock) and client.list_blocks(scope) == mem.list_blocks(scope) == [made]
    assert client.get_block(scope, "persona") == made
    with pytest.raises(InvalidInput, match="read-only"):
        client.set_block(scope, "persona", "Be verbose.")
    client.delete_block(scope, "persona", admin=True)
    with pytest.raises(NotFound, match="no block 'persona'"):
        client.get_block(scope, "persona")
    with pytest.raises(InvalidInput, match="U\\+200B"):
        client.recall("tea", f"user:x\u200b{scope.subject_id}")
    with pytest.raises(InvalidInput, match="naive"):
        client.recall("tea", scope, as_of=datetime(2021, 1, 1))
    client.remember("I like tea.", scope)
    receipt = client.forget(scope)
    assert receipt.episodes == 1 and mem.episodes(scope) == []


def test_export_and_import_round_trip(client, mem):
    scope = fresh_scope()
    client.remember("I like tea.", scope, at=EPOCH, episode_id="e1")
    records = client.export(scope)
    assert records[1:] == list(mem.export(scope))[1:]  # the header aside: it says when it was made
    assert client.import_(records).skipped.episode == 1  # already stored: skipped, not doubled
    client.forget(scope)
    assert client.import_(records, force=True).imported.episode == 1
    assert [e.raw for e in client.episodes(scope)] == ["I like tea."]


def test_a_key_sees_only_its_subjects(served, mem):
    url, _ = served
    mine, other = fresh_scope(), fresh_scope()
    _, token = mem.create_key([str(mine)])
    with Client(url, token, retry_for=0.5) as held:
        held.remember("I like tea.", mine)
        with pytest.raises(ScopeViolation, match="does not hold subject"):
            held.recall("tea", other)
    with Client(url, "gm_nothing_wrong", retry_for=0.5) as stranger, pytest.raises(Unauthorized):
        stranger.recall("tea", mine)


def test_the_async_client_is_the_same_calls(served):
    url, token = served
    scope = fresh_scope()

    async def run():
        async with AsyncClient(url, token) as mem:
            await mem.remember("I play the cello.", scope, at=EPOCH, episode_id="e1")
            found = await mem.recall("cello", scope)
            return found, await mem.episodes(scope)

    found, episodes = asyncio.run(run())
    assert [h.content for h in found.hits] == ["I play the cello."] and [e.id for e in episodes] == ["e1"]


def test_503_and_a_lost_connection_are_retried_then_raised():
    """With a transport that fails the first tries, the call succeeds; one that always answers
    503 raises Unavailable once the retry window is spent."""
    tries: list[str] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        tries.append(request.url.path)
        if len(tries) == 1:
            raise httpx.ConnectError("refused")
        if len(tries) == 2:
            return httpx.Response(503, json={"error": {"code": "busy", "message": "busy: retry shortly"}})
        return httpx.Response(200, json={"key": None})

    with Client("http://graphmem.test", transport=httpx.MockTransport(flaky), retry_for=5) as mem:
        assert mem.me().key is None and len(tries) == 3
    down = httpx.MockTransport(lambda _: httpx.Response(503, json={"error": {"code": "unavailable", "message": "x"}}))
    with Client("http://graphmem.test", transport=down, retry_for=0.3) as mem, pytest.raises(Unavailable, match="x"):
        mem.me()


def test_an_ending_lost_mid_request_is_not_sent_twice():
    sent: list[str] = []

    def lost(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        raise httpx.ReadError("connection reset")

    with Client("http://graphmem.test", transport=httpx.MockTransport(lost), retry_for=2) as mem:
        with pytest.raises(httpx.ReadError):
            mem.end("u1", "user:alice", "moved")
        assert len(sent) == 1
        with pytest.raises(httpx.ReadError):
            mem.recall("tea", "user:alice")
        assert len(sent) > 2  # a read is safe to send again


def test_the_client_loads_neither_the_facade_nor_fastapi_nor_neo4j():
    import subprocess

    code = (
        "import sys, graphmem.client; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fastapi', 'starlette', 'neo4j', 'uvicorn') "
        "or m.startswith(('graphmem.api', 'graphmem.pipelines', 'graphmem.adapters'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_a_write_that_becomes_a_job_is_polled_to_its_end():
    report = {
        "episodes": 1,
        "new_episodes": 1,
        "decisions": {"ADD": 1, "UPDATE": 0, "DELETE": 0, "NOOP": 0},
        "unit_ids": ["u1"],
        "extraction_failed": [],
        "reviews": [],
        "failed": [],
    }
    job = {"id": "j1", "subject": "user:alice", "project": None, "status": "running"}
    polls: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(202, json=job)
        polls.append(request.url.path)
        if len(polls) < 3:
            return httpx.Response(200, json=job)
        if request.url.path.endswith("/j1"):
            return httpx.Response(200, json={**job, "status": "done", "result": report})
        problem = {"code": "conflict", "message": "user:alice was erased while this write ran"}
        return httpx.Response(200, json={**job, "id": "j2", "status": "failed", "error": problem})

    with Client("http://graphmem.test", transport=httpx.MockTransport(server)) as mem:
        assert mem.remember("I like tea.", "user:alice").unit_ids == ["u1"]
        assert polls == ["/v1/jobs/j1"] * 3
        job["id"] = "j2"
        with pytest.raises(Conflict, match="erased while this write ran"):
            mem.remember("I like tea.", "user:alice")


def test_ids_and_subjects_stay_one_path_segment():
    """An id of dots, a slash or a query character never retargets the request."""
    sent: list[bytes] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.raw_path)
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no episode"}})

    with Client("http://graphmem.test", transport=httpx.MockTransport(server)) as mem:
        for episode_id in ("..", ".", "a/../b", "x?project=p", "%2F"):
            with pytest.raises(NotFound, match="no episode"):
                mem.delete_episode(episode_id, "user:alice")
    prefix = b"/v1/subjects/user%3Aalice/episodes/"
    assert [p.removeprefix(prefix) for p in sent] == [b"%2E%2E", b"%2E", b"a%2F..%2Fb", b"x%3Fproject%3Dp", b"%252F"]
