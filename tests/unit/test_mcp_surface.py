"""The MCP server beside its tools, in process through the SDK's own client: capabilities, the
resources (subjects, entities, units) and their scoping, the memory_context prompt, completion,
logging/setLevel, and 404 on the OAuth discovery paths with token auth. A caller bound to one
subject by its API key (``CALLER``, set by the HTTP middleware) neither lists, reads nor
completes another: over a real HTTP server in tests/neo4j/test_mcp.py too."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference
from pydantic import ValidationError
from starlette.testclient import TestClient

from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.api import GraphMem
from graphmem.domain.models import Fact
from graphmem.mcp import surface
from graphmem.mcp.config import CALLER
from graphmem.mcp.server import McpConfig, build_server, http_app
from graphmem.mcp.surface import ENTITY_URI, PROMPT, SUBJECT_URI, UNIT_URI

ALICE, BOB, CAROL = "user:alice", "user:bob", "user:carol"


@pytest.fixture
def server(mem: GraphMem):
    return build_server(lambda: mem, McpConfig(subject=ALICE, allow_subjects=(BOB,)))


def session(server, scenario, **client):
    """Run ``scenario(client)`` on an initialised in-process client (handshake-era protocol,
    where logging/setLevel exists)."""

    async def go():
        with warnings.catch_warnings():  # the SDK deprecates logging as of protocol 2026-07-28
            warnings.simplefilter("ignore")
            async with Client(server, mode="legacy", **client) as c:
                return await scenario(c)

    return anyio.run(go)


def text(result) -> dict:
    [content] = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def every_resource(c) -> tuple[list[str], int]:
    """``resources/list`` paged to its end: the URIs, and how many pages it took."""
    listed, cursor, pages = [], None, 0
    while pages == 0 or cursor is not None:
        result = await c.list_resources(cursor=cursor)
        listed += [r.uri for r in result.resources]
        cursor, pages = result.next_cursor, pages + 1
    return listed, pages


async def refused(call) -> MCPError:
    with pytest.raises(MCPError) as info:
        await call
    return info.value


def test_capabilities_are_what_the_server_has(server):
    async def scenario(c):
        caps = c.server_capabilities.model_dump(exclude_none=True)
        assert set(caps) >= {"tools", "resources", "prompts", "completions", "logging"}
        assert caps["resources"]["subscribe"] is False
        templates = {t.uri_template for t in (await c.list_resource_templates()).resource_templates}
        assert templates == {SUBJECT_URI, ENTITY_URI, UNIT_URI}
        assert [p.name for p in (await c.list_prompts()).prompts] == [PROMPT]

    session(server, scenario)


def test_resources_reach_subjects_entities_and_units_in_scope(server):
    async def scenario(c):
        written = (await c.call_tool("remember", {"text": "Alice lives in Berlin."})).structured_content
        unit_id = written["unit_ids"][0]
        listed, _ = await every_resource(c)
        assert listed == [
            "graphmem://subjects/user:alice",
            "graphmem://subjects/user:alice/entities/Alice",
            "graphmem://subjects/user:alice/entities/Berlin",
            "graphmem://subjects/user:bob",
        ]

        subject = text(await c.read_resource("graphmem://subjects/user:alice"))
        assert subject["scope"] == ALICE and subject["units"] == 1 and subject["episodes"] == 1
        assert subject["recent_units"] == [
            {"uri": f"graphmem://subjects/user:alice/units/{unit_id}", "content": "Alice lives in Berlin."}
        ]
        entity = text(await c.read_resource("graphmem://subjects/user:alice/entities/alice"))  # case ignored
        assert entity["entity"]["name"] == "Alice" and entity["entity"]["facts"] == 1
        assert entity["fact_uris"] == [f"graphmem://subjects/user:alice/units/{unit_id}"]
        assert [f["id"] for f in entity["facts"]] == [unit_id]
        assert [e["content"] for e in entity["history"]] == ["Alice lives in Berlin."]
        unit = text(await c.read_resource(f"graphmem://subjects/user:alice/units/{unit_id}"))
        assert unit["unit"]["id"] == unit_id and unit["episode"]["raw"] == "Alice lives in Berlin."
        assert "graphmem://subjects/user:alice/entities/Alice" in unit["entity_uris"]

        # another subject's unit, a subject the server does not allow, an unknown entity, no
        # subject, an unknown URI: -32602 with the URI in the data (SEP-2164)
        for uri in (
            f"graphmem://subjects/user:bob/units/{unit_id}",
            "graphmem://subjects/user:carol",
            "graphmem://subjects/user:alice/entities/Nobody",
            "graphmem://subjects/",  # a URI names its subject: never the default one
            "test://static-text",
        ):
            error = await refused(c.read_resource(uri))
            assert error.code == -32602 and error.data == {"uri": uri}, uri
        assert (await refused(c.read_resource("graphmem://subjects/user:carol"))).message == (
            "subject user:carol is not allowed by this server"
        )

    session(server, scenario)


def test_the_prompt_assembles_context_for_a_question(server):
    async def scenario(c):
        await c.call_tool("remember", {"text": "Alice lives in Berlin."})
        got = await c.get_prompt(PROMPT, {"question": "where does Alice live?"})
        [message] = got.messages
        assert message.role == "user"
        assert "Alice lives in Berlin." in message.content.text
        assert message.content.text.endswith("Question: where does Alice live?")
        assert (await refused(c.get_prompt(PROMPT, {"question": "q", "subject": CAROL}))).code == -32602
        assert (await refused(c.get_prompt("test_simple_prompt", {}))).code == -32602

    session(server, scenario)


def test_completion_of_subjects_and_entity_names(server):
    async def scenario(c):
        await c.call_tool("remember", {"text": "Alice lives in Berlin."})
        await c.call_tool("remember", {"text": "Alfred lives in Oslo.", "subject": BOB})
        prompt = PromptReference(type="ref/prompt", name=PROMPT)
        assert (await c.complete(prompt, {"name": "subject", "value": "user:b"})).completion.values == [BOB]
        template = ResourceTemplateReference(type="ref/resource", uri=SUBJECT_URI)
        assert (await c.complete(template, {"name": "subject", "value": "USER:"})).completion.values == [ALICE, BOB]
        entity = ResourceTemplateReference(type="ref/resource", uri=ENTITY_URI)
        names = await c.complete(entity, {"name": "name", "value": "al"}, context_arguments={"subject": BOB})
        assert names.completion.values == ["Alfred"]
        names = await c.complete(entity, {"name": "name", "value": "AL"})  # the server's subject, case ignored
        assert names.completion.values == ["Alice"]
        names = await c.complete(entity, {"name": "name", "value": "a"}, context_arguments={"subject": CAROL})
        assert names.completion.values == []  # a subject the server does not allow completes to nothing
        other = PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
        assert (await c.complete(other, {"name": "arg1", "value": "x"})).completion.values == []

    session(server, scenario)


def test_set_level_sends_each_call_its_log_lines(server):
    lines = []

    async def on_log(params):
        lines.append((params.level, params.data))

    async def scenario(c):
        await c.call_tool("remember", {"text": "Alice lives in Berlin."})
        assert lines == []  # nothing before logging/setLevel
        assert (await c.set_logging_level("info")).model_dump(exclude_none=True) == {}
        await c.call_tool("remember", {"text": "Alice likes tea."})
        await c.call_tool("explain", {"unit_id": "nope"})

    session(server, scenario, logging_callback=on_log)
    assert [level for level, _ in lines] == ["info", "warning"]
    assert lines[0][1]["tool"] == "remember" and lines[0][1]["did"]["decisions"]["ADD"] == 1
    assert lines[1][1] == {"tool": "explain", "refused": "no unit nope in scope user:alice"}


def test_oauth_discovery_is_404_with_token_auth(server):
    app = http_app(server, token="secret")
    with TestClient(app, base_url="http://127.0.0.1:8765") as http:
        for path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            answer = http.get(path)
            assert answer.status_code == 404, path
            assert answer.json()["error"]["code"] == "not_found"
        assert http.post("/mcp", json={}).status_code == 401


def test_a_key_bound_to_one_subject_lists_reads_and_completes_only_that_one(mem: GraphMem):
    """As the HTTP middleware does, the caller is an API key holding Alice only, on a server
    that allows any subject: Bob's memory is neither listed, read, prompted nor completed."""
    server = build_server(lambda: mem, McpConfig(subject=ALICE, allow_any_subject=True))
    bob_unit = mem.remember("Bob lives in Oslo.", subject=BOB).unit_ids[0]
    mem.remember("Alice lives in Berlin.", subject=ALICE)
    key, _ = mem.create_key([ALICE])

    async def scenario(c):
        assert (await every_resource(c))[0] == [
            "graphmem://subjects/user:alice",
            "graphmem://subjects/user:alice/entities/Alice",
            "graphmem://subjects/user:alice/entities/Berlin",
        ]
        for uri in (
            "graphmem://subjects/user:bob",
            "graphmem://subjects/user:bob/entities/Bob",
            f"graphmem://subjects/user:bob/units/{bob_unit}",
            f"graphmem://subjects/user:alice/units/{bob_unit}",  # Bob's unit under Alice's name
        ):
            error = await refused(c.read_resource(uri))
            assert error.code == -32602 and error.data == {"uri": uri}, uri
            assert "Oslo" not in error.message
        assert (await refused(c.get_prompt(PROMPT, {"question": "where?", "subject": BOB}))).code == -32602
        prompt = PromptReference(type="ref/prompt", name=PROMPT)
        assert (await c.complete(prompt, {"name": "subject", "value": "user:"})).completion.values == [ALICE]
        entity = ResourceTemplateReference(type="ref/resource", uri=ENTITY_URI)
        names = await c.complete(entity, {"name": "name", "value": "b"}, context_arguments={"subject": BOB})
        assert names.completion.values == []  # Bob is stored, but not Alice's key's
        forged = surface.page_cursor(BOB, None)  # a cursor naming Bob: listing rechecks the caller
        assert (await refused(c.list_resources(cursor=forged))).code == -32602

    mark = CALLER.set(key)
    try:
        session(server, scenario)
    finally:
        CALLER.reset(mark)


@pytest.mark.parametrize("page", [1, 2, 3, 50])
def test_resources_list_pages_to_every_subject_and_entity_once(mem: GraphMem, monkeypatch, page):
    """Paged by ``page`` entities, the listing ends after each subject the caller may read,
    followed by each of its entities by name, exactly once and in that order."""
    monkeypatch.setattr(surface, "PAGE", page)
    server = build_server(lambda: mem, McpConfig(subject=ALICE, allow_subjects=(BOB, CAROL)))
    names = {ALICE: ["Ann", "bea", "Cyd", "Dov", "eve"], BOB: [], CAROL: ["Zed"]}
    for subject, held in names.items():
        for name in held:
            mem.remember(
                f"{name} likes tea.", subject=subject, facts=[Fact(subject=name, predicate="likes", object="x")]
            )
    wanted = []
    for subject, held in names.items():
        wanted.append(f"graphmem://subjects/{subject}")
        found = sorted([*held, *(["x"] if held else [])], key=str.casefold)
        wanted += [f"graphmem://subjects/{subject}/entities/{name}" for name in found]

    listed, pages = session(server, every_resource)
    assert listed == wanted
    assert pages >= len(names) and (page > 6 or pages > len(names))


#: Entity names as people write them: punctuation, path-like and URI-like characters included.
NAMES = st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), min_size=1, max_size=30)


@settings(deadline=None, max_examples=30)  # each example serves a fresh memory
@given(names=st.lists(NAMES, min_size=1, max_size=4))
@example(names=["AC/DC", "C:\\x", "50% off", "{x}", "a/../b", "x?y#z"])
def test_every_listed_entity_uri_reads_back_its_entity(embedder, names):
    """Whatever an entity is called ("AC/DC", "50% off", "C:\\x", "{x}"), the URI
    resources/list gives for it reads that entity, and its name completes to it."""
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, embedder))
    server = build_server(lambda: mem, McpConfig(subject=ALICE))
    try:
        facts = [Fact(subject=name, predicate="is", object="noted") for name in names]
    except ValidationError:  # a name the domain refuses (only punctuation, a hidden character)
        assume(False)
    mem.remember("noted", subject=ALICE, facts=facts)
    stored = {e.name for e in mem.entities(ALICE, limit=100).entities}

    async def scenario(c):
        listed, _ = await every_resource(c)
        found = {}
        for uri in listed[1:]:
            found[text(await c.read_resource(uri))["entity"]["name"]] = uri
        entity = ResourceTemplateReference(type="ref/resource", uri=ENTITY_URI)
        completed = {
            name: (await c.complete(entity, {"name": "name", "value": name})).completion.values for name in stored
        }
        return found, completed

    found, completed = session(server, scenario)
    assert set(found) == stored
    assert all(name in values for name, values in completed.items())
