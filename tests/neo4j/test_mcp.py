"""The MCP server against the real Neo4j, driven by the SDK's own client over stdio and over
streamable HTTP (with its bearer token, or an API key): each test starts `graphmem mcp serve` in
a subprocess for a fresh subject. The tools' rules (scoping, confirmation, blocks) are tested in
process in tests/unit/test_mcp.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared._httpx_utils import create_mcp_http_client

try:  # mcp 2.x
    from mcp.client.streamable_http import streamable_http_client

    def http_client(url: str, token: str):
        return streamable_http_client(
            url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        )
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.client.streamable_http import streamablehttp_client

    def http_client(url: str, token: str):
        return streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"})


from mcp.shared.exceptions import MCPError
from mcp.types import PaginatedRequestParams, PromptReference, ResourceTemplateReference

import graphmem
from tests.conftest import fresh_scope
from tests.ports import serving

pytestmark = pytest.mark.neo4j

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {
    "remember",
    "recall",
    "assemble",
    "history",
    "explain",
    "blocks_list",
    "blocks_get",
    "blocks_set",
    "forget",
    "episodes_list",
    "units_list",
    "entities_list",
    "entity_show",
    "episode_delete",
    "decisions",
}
TRANSPORTS = ["stdio", "http"]
#: The bearer token the HTTP servers of these tests are started with.
TOKEN = "test-token-" + os.urandom(8).hex()


@pytest.fixture(autouse=True)
def _neo4j(conn):
    """Neo4j is up and migrated before any server starts (the `conn` fixture fails otherwise)."""


class ToolFailed(Exception):
    """A tool call answered with isError: its text is the message."""


def new_subject() -> str:
    scope = fresh_scope()
    return f"{scope.subject_type.value}:{scope.subject_id}"


def serve_argv(*args: str) -> list[str]:
    """`graphmem mcp serve ...`, run by this interpreter."""
    return [sys.executable, "-m", "graphmem.cli.main", "mcp", "serve", *args]


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("NEO4J_URI", "bolt://127.0.0.1:7687")
    env.setdefault("GRAPHMEM_EMBEDDER", "hashing")
    env.pop("GRAPHMEM_MCP_SUBJECT", None)
    env["GRAPHMEM_MCP_TOKEN"] = TOKEN
    return env


@contextmanager
def http_server(args: list[str]):
    """`mcp serve --transport http` on a free port; yields its URL once it accepts connections."""
    with serving(
        serve_argv(*args, "--transport", "http"), "mcp serve --transport http", env=server_env(), cwd=ROOT
    ) as server:
        yield f"http://127.0.0.1:{server.port}/mcp"


@asynccontextmanager
async def connect(transport: str, subject: str, *extra: str, token: str = TOKEN, **client):
    """An initialised ClientSession to a fresh server for ``subject`` (over HTTP, sending
    ``token``); ``session.info`` is the server's initialize result. ``client``: the
    session's callbacks (``logging_callback``)."""
    args = ["--subject", subject, *extra]
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=serve_argv(*args)[1:], env=server_env(), cwd=str(ROOT)
        )
        with tempfile.TemporaryFile("w+") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, **client) as session,
            ):
                session.info = await session.initialize()
                yield session
    else:
        with http_server(args) as url:
            async with (
                http_client(url, token) as streams,
                ClientSession(streams[0], streams[1], **client) as session,
            ):
                session.info = await session.initialize()
                yield session


async def call(session: ClientSession, name: str, **arguments) -> dict:
    result = (await session.call_tool(name, arguments)).model_dump(by_alias=True, mode="json")
    text = "".join(block.get("text", "") for block in result["content"])
    if result.get("isError"):
        raise ToolFailed(text)
    return result.get("structuredContent") or json.loads(text)


async def refused(session: ClientSession, name: str, **arguments) -> str:
    with pytest.raises(ToolFailed) as info:
        await call(session, name, **arguments)
    return str(info.value)


def create_key(subject: str) -> str:
    """A new API key holding ``subject`` (``graphmem keys create``)."""
    made = subprocess.run(
        [sys.executable, "-m", "graphmem.cli.main", "keys", "create", "--subject", subject, "--json"],
        env=server_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(made.stdout)["key"]


def run(scenario) -> None:
    anyio.run(scenario)


# -- tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_remember_then_recall_round_trip(transport):
    subject = new_subject()

    async def scenario():
        async with connect(transport, subject) as s:
            assert s.info.model_dump(by_alias=True)["serverInfo"]["version"] == graphmem.__version__
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for name, tool in tools.items():
                schema = tool.model_dump(by_alias=True)["inputSchema"]
                assert tool.description and "subject" in schema["properties"], name

            written = await call(s, "remember", text="Alice likes green tea.")
            assert written["decisions"]["ADD"] == 1 and len(written["unit_ids"]) == 1
            hits = (await call(s, "recall", query="what does Alice like?", k=3))["hits"]
            assert hits and hits[0]["content"] == "Alice likes green tea."
            assert hits[0]["id"] == written["unit_ids"][0] and hits[0]["scope"] == subject

            why = await call(s, "explain", unit_id=hits[0]["id"])
            assert why["episode"]["raw"] == "Alice likes green tea."
            assert [d["op"] for d in why["decisions"]] == ["ADD"] and why["decisions"][0]["reason"]

            context = await call(s, "assemble", query="what does Alice like to drink?", budget=200)
            assert "green tea" in context["text"] and context["trace"]["id"]
            assert context["trace"]["recalled_ids"] == [hits[0]["id"]]

            message = await refused(s, "explain", unit_id="no-such-unit")
            assert message == f"no unit no-such-unit in scope {subject}"

    run(scenario)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_as_of_recall(transport):
    subject = new_subject()

    def fact(city: str, when: str) -> dict:
        return {
            "subject": "Alice",
            "predicate": "lives_in",
            "object": city,
            "content": f"Alice lives in {city}",
            "valid_at": when,
            "single_valued": True,
        }

    async def scenario():
        async with connect(transport, subject) as s:
            await call(s, "remember", text="I live in Paris.", at="2020-01-01", facts=[fact("Paris", "2020-01-01")])
            moved = await call(
                s,
                "remember",
                text="I moved to Berlin.",
                at="2022-01-01T09:00:00Z",
                facts=[fact("Berlin", "2022-01-01")],
            )
            assert moved["decisions"]["UPDATE"] == 1

            then = (await call(s, "recall", query="where does Alice live?", k=5, as_of="2021-01-01"))["hits"]
            assert [h["content"] for h in then] == ["Alice lives in Paris"]
            assert then[0]["valid_at"] == "2020-01-01T00:00:00+00:00"
            now = (await call(s, "recall", query="where does Alice live?", k=5))["hits"]
            assert [h["content"] for h in now] == ["Alice lives in Berlin"]

            timeline = (await call(s, "history", entity="Alice"))["entries"]
            assert [e["content"] for e in timeline] == ["Alice lives in Paris", "Alice lives in Berlin"]
            assert timeline[0]["invalid_at"] == "2022-01-01T00:00:00+00:00"

            bad = await refused(s, "recall", query="where?", as_of="last year")
            assert bad.startswith("as_of: 'last year' is not an ISO 8601 time")

    run(scenario)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_multi_hop_recall(transport):
    subject = new_subject()

    async def scenario():
        async with connect(transport, subject) as s:
            # a name no other test writes: fulltext weighs a word by its rarity in the whole
            # index, and the suite writes thousands of Alices
            texts = [
                "Zoltan reports to Bob.",
                "Bob lives in Lisbon.",
                "Carol lives in Madrid.",
                "Dave lives in Oslo.",
                "Erin lives in Rome.",
                "Frank lives in Vienna.",
            ]
            ids = {}
            for text in texts:
                ids[text] = (await call(s, "remember", text=text))["unit_ids"][0]
            hits = (await call(s, "recall", query="where does Zoltan's manager live?", k=2, hops=1))["hits"]
            lisbon = [h for h in hits if h["id"] == ids["Bob lives in Lisbon."]]
            assert lisbon, hits
            assert lisbon[0]["hop"] == 1 and lisbon[0]["path"]
            assert lisbon[0]["path"][0] == "Zoltan reports to Bob." and lisbon[0]["path"][-1] == "Bob lives in Lisbon."

    run(scenario)


def test_forget_with_confirmation_erases_the_subject():
    subject = new_subject()

    async def scenario():
        async with connect("stdio", subject) as s:
            await call(s, "remember", text="Alice likes green tea.")
            done = await call(s, "forget", subject=subject, confirm=True)
            assert done["subject"] == subject
            assert done["forgotten"]["units"] >= 1 and done["forgotten"]["episodes"] >= 1
            assert (await call(s, "recall", query="what does Alice like?"))["hits"] == []

    run(scenario)


def test_http_needs_the_token_or_an_api_key_whose_subjects_bound_the_calls(conn):
    alice, bob = new_subject(), new_subject()
    key = create_key(alice)

    def status(url: str, token: str | None) -> int:
        request = urllib.request.Request(url, data=b"{}", method="POST", headers={"Content-Type": "application/json"})
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    with http_server(["--subject", alice, "--allow-any-subject"]) as url:
        assert status(url, None) == 401 and status(url, "wrong") == 401 and status(url, TOKEN + "x") == 401
        assert status(url, TOKEN) not in (401, 403) and status(url, key) not in (401, 403)

    async def scenario():
        async with connect("http", alice, "--allow-any-subject", token=key) as s:
            written = await call(s, "remember", text="Alice likes green tea.")
            why = await call(s, "explain", unit_id=written["unit_ids"][0])
            assert why["decisions"][0]["actor"] == key.split("_")[1]
            assert (
                await refused(s, "recall", query="tea", subject=bob)
                == f"key {key.split('_')[1]} does not hold subject {bob}"
            )
        async with connect("http", alice, "--allow-any-subject") as s:  # the server's token: any subject
            assert (await call(s, "recall", query="tea", subject=bob))["hits"] == []
            assert (await call(s, "decisions"))["decisions"][0]["actor"] == key.split("_")[1]

    run(scenario)


async def every_resource(session: ClientSession) -> list[str]:
    """``resources/list`` paged to its end."""
    listed, cursor = [], None
    while True:
        result = await session.list_resources(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        listed += [r.uri for r in result.resources]
        if (cursor := result.next_cursor) is None:
            return listed


def document(result) -> dict:
    [content] = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")  # as of protocol 2026-07-28
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_resources_prompt_completion_and_logging(transport):
    """What initialize advertises answers: the subject and its units and entities by URI, the
    memory_context prompt, completion of a subject, and log lines after logging/setLevel."""
    subject = new_subject()
    lines = []

    async def on_log(params):
        lines.append((params.level, params.data))

    async def scenario():
        async with connect(transport, subject, logging_callback=on_log) as s:
            caps = s.info.capabilities.model_dump(exclude_none=True)
            assert {"tools", "resources", "prompts", "completions", "logging"} <= set(caps)
            written = await call(s, "remember", text="Alice lives in Berlin.")
            unit_id = written["unit_ids"][0]
            home = f"graphmem://subjects/{subject}"
            assert await every_resource(s) == [home, f"{home}/entities/Alice", f"{home}/entities/Berlin"]
            templates = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
            assert templates == {
                "graphmem://subjects/{subject}",
                "graphmem://subjects/{subject}/entities/{name}",
                "graphmem://subjects/{subject}/units/{unit_id}",
            }
            held = document(await s.read_resource(home))
            assert (held["scope"], held["units"], held["episodes"]) == (subject, 1, 1)
            unit = document(await s.read_resource(f"{home}/units/{unit_id}"))
            assert (
                unit["unit"]["content"] == "Alice lives in Berlin." and f"{home}/entities/Alice" in unit["entity_uris"]
            )
            timeline = document(await s.read_resource(f"{home}/entities/Alice"))["history"]
            assert [e["id"] for e in timeline] == [unit_id]

            [message] = (await s.get_prompt("memory_context", {"question": "where does Alice live?"})).messages
            assert "Alice lives in Berlin." in message.content.text

            prompt = PromptReference(type="ref/prompt", name="memory_context")
            assert (await s.complete(prompt, {"name": "subject", "value": subject[:6]})).completion.values == [subject]
            entity = ResourceTemplateReference(type="ref/resource", uri="graphmem://subjects/{subject}/entities/{name}")
            names = await s.complete(entity, {"name": "name", "value": "b"}, context_arguments={"subject": subject})
            assert names.completion.values == ["Berlin"]

            await s.set_logging_level("debug")
            await refused(s, "explain", unit_id="nope")
        assert [(level, data["tool"]) for level, data in lines] == [("warning", "explain"), ("debug", "explain")]

    run(scenario)


def test_a_key_bound_to_one_subject_reaches_no_other_by_uri_prompt_or_completion():
    """Over HTTP with an API key holding Alice on a server that allows any subject: Bob's
    memory is not listed, read, prompted nor completed, whichever URI names it."""
    alice, bob = new_subject(), new_subject()
    key = create_key(alice)

    async def scenario():
        async with connect("http", alice, "--allow-any-subject") as s:  # the server's token: any subject
            bob_unit = (await call(s, "remember", text="Bob lives in Oslo.", subject=bob))["unit_ids"][0]
        async with connect("http", alice, "--allow-any-subject", token=key) as s:
            await call(s, "remember", text="Alice lives in Berlin.")
            assert (await every_resource(s))[0] == f"graphmem://subjects/{alice}"
            assert not any(bob in uri for uri in await every_resource(s))
            for uri in (
                f"graphmem://subjects/{bob}",
                f"graphmem://subjects/{bob}/entities/Bob",
                f"graphmem://subjects/{bob}/units/{bob_unit}",
                f"graphmem://subjects/{alice}/units/{bob_unit}",
            ):
                with pytest.raises(MCPError) as info:
                    await s.read_resource(uri)
                assert info.value.code == -32602 and "Oslo" not in info.value.message, uri
            with pytest.raises(MCPError):
                await s.get_prompt("memory_context", {"question": "where?", "subject": bob})
            prompt = PromptReference(type="ref/prompt", name="memory_context")
            assert (await s.complete(prompt, {"name": "subject", "value": ""})).completion.values == [alice]
            entity = ResourceTemplateReference(type="ref/resource", uri="graphmem://subjects/{subject}/entities/{name}")
            names = await s.complete(entity, {"name": "name", "value": "b"}, context_arguments={"subject": bob})
            assert names.completion.values == []

    run(scenario)


def test_oauth_discovery_is_404_with_token_auth_and_the_bearer_still_works():
    """A client such as MCP Inspector probes these before connecting: a 404 (not 401) makes it
    send the bearer it holds."""
    with http_server(["--subject", new_subject()]) as url:
        base = url.removesuffix("/mcp")
        for path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-authorization-server",
            "/.well-known/oauth-authorization-server/mcp",
            "/.well-known/openid-configuration",
        ):
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(base + path, timeout=10)
            assert info.value.code == 404, path
            assert json.loads(info.value.read())["error"]["code"] == "not_found"
        request = urllib.request.Request(url, data=b"{}", method="POST", headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=10)
        assert info.value.code == 401  # the endpoint itself still needs the bearer
