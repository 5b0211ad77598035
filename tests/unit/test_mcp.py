"""The MCP tools in process over the in-memory adapters: scoping, confirmation, the writable
rule, error lines and shapes. The transports (stdio, streamable HTTP) against a real Neo4j are
in tests/neo4j/test_mcp.py."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("mcp")

import anyio

from graphmem.api import GraphMem
from graphmem.domain.limits import MAX_BLOCK_TOKENS, MAX_HOPS, MAX_K
from graphmem.domain.models import Fact, MemoryBlock, Scope
from graphmem.mcp.server import FactIn, McpConfig, build_server

TOOLS = [
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
    "episode_delete",
    "decisions",
]
ALICE, BOB = "user:alice", "user:bob"


class ToolFailed(Exception):
    """A tool call answered with isError: its text is the message."""


@pytest.fixture
def serve(mem: GraphMem):
    """``serve(**config)``: a server for ``mem``, counting how often it opened the memory."""

    def make(**config):
        opened = []

        def factory() -> GraphMem:
            opened.append(1)
            return mem

        server = build_server(factory, McpConfig(**{"subject": ALICE, **config}))
        server.opened = opened
        return server

    return make


def call(server, name: str, **arguments) -> dict:
    async def go():
        return await server.call_tool(name, arguments)

    result = anyio.run(go).model_dump(by_alias=True, mode="json")
    text = "".join(block.get("text", "") for block in result["content"])
    if result.get("isError"):
        raise ToolFailed(text)
    return result.get("structuredContent") or json.loads(text)


def refused(server, name: str, **arguments) -> str:
    with pytest.raises(ToolFailed) as info:
        call(server, name, **arguments)
    return str(info.value)


def test_every_tool_is_described_and_scoped_and_the_memory_opens_lazily(serve):
    server = serve()
    tools = anyio.run(server.list_tools)
    assert [t.name for t in tools] == TOOLS
    for tool in tools:
        schema = tool.model_dump(by_alias=True)["inputSchema"]
        assert tool.description and "subject" in schema["properties"], tool.name
    assert server.opened == []  # listing tools opens nothing
    call(server, "blocks_list")
    call(server, "blocks_list")
    assert server.opened == [1]  # opened once, at the first call


def _bound(schema: dict, key: str) -> int | None:
    """A bound of an argument's schema, in a nullable one's non-null branch too."""
    branches = [schema, *schema.get("anyOf", [])]
    return next((b[key] for b in branches if key in b), None)


def test_the_tools_take_the_limits_of_their_one_home(serve):
    tools = {t.name: t.model_dump(by_alias=True)["inputSchema"]["properties"] for t in anyio.run(serve().list_tools)}
    assert _bound(tools["recall"]["k"], "maximum") == MAX_K
    assert _bound(tools["recall"]["hops"], "maximum") == _bound(tools["assemble"]["hops"], "maximum") == MAX_HOPS
    assert _bound(tools["blocks_set"]["token_budget"], "maximum") == MAX_BLOCK_TOKENS
    assert _bound(tools["episodes_list"]["limit"], "maximum") == _bound(tools["decisions"]["limit"], "maximum") == MAX_K


def test_remember_recall_explain_assemble(serve):
    server = serve()
    written = call(server, "remember", text="Alice likes green tea.")
    assert written["decisions"] == {"ADD": 1, "UPDATE": 0, "DELETE": 0, "NOOP": 0} and len(written["unit_ids"]) == 1
    found = call(server, "recall", query="what does Alice like?", k=3)
    [hit] = found["hits"]
    assert found["relevant"] is True and 0 < hit["confidence"] <= 1
    assert (hit["id"], hit["content"], hit["scope"], hit["project"]) == (
        written["unit_ids"][0],
        "Alice likes green tea.",
        ALICE,
        None,
    )
    why = call(server, "explain", unit_id=hit["id"])
    assert why["episode"]["raw"] == "Alice likes green tea." and [d["op"] for d in why["decisions"]] == ["ADD"]
    context = call(server, "assemble", query="which tea does Alice like?", budget=200)
    assert "green tea" in context["text"] and context["trace"]["recalled_ids"] == [hit["id"]]
    assert refused(server, "explain", unit_id="no-such-unit") == f"no unit no-such-unit in scope {ALICE}"


def test_times_as_of_and_history(serve):
    server = serve()

    def fact(city: str, when: str) -> dict:
        return {"subject": "Alice", "predicate": "lives_in", "object": city, "valid_at": when, "single_valued": True}

    call(server, "remember", text="I live in Paris.", at="2020-01-01", facts=[fact("Paris", "2020-01-01")])
    assert (
        call(server, "remember", text="I moved.", at="2022-01-01T09:00:00+02:00", facts=[fact("Berlin", "2022-01-01")])[
            "decisions"
        ]["UPDATE"]
        == 1
    )
    [then] = call(server, "recall", query="where does Alice live?", as_of="2021-01-01")["hits"]
    assert then["content"] == "Alice lives in Paris" and then["valid_at"] == "2020-01-01T00:00:00+00:00"
    timeline = call(server, "history", entity="Alice")["entries"]
    assert [e["content"] for e in timeline] == ["Alice lives in Paris", "Alice lives in Berlin"]
    assert timeline[0]["invalid_at"] == "2022-01-01T00:00:00+00:00"
    assert refused(server, "recall", query="where?", as_of="last year").startswith(
        "as_of: 'last year' is not an ISO 8601 time"
    )
    assert refused(
        server, "remember", text="x", facts=[{"subject": "A", "predicate": "p", "valid_at": "soon"}]
    ).startswith("facts.0.valid_at: 'soon' is not an ISO 8601 time")
    assert refused(server, "history") == "give exactly one of unit_id or entity"


@pytest.mark.parametrize(
    "name, arguments, message",
    [
        ("recall", {"query": "tea", "k": "many"}, "k: Input should be a valid integer"),
        ("recall", {"query": 5}, "query: Input should be a valid string"),
        (
            "recall",
            {"query": "tea", "as_of": "0001-01-01T00:00:00+14:00"},
            "as_of: '0001-01-01T00:00:00+14:00' is outside the years 1..9999 once in UTC",
        ),
        ("remember", {"text": "x", "facts": [{"subject": 1}]}, "facts.0.subject: Input should be a valid string"),
        ("remember", {"text": "tea \ud800"}, "text: text holds a lone surrogate (U+D800): not Unicode text"),
        ("recall", {"query": "tea", "subject": "user:al\u200bice"}, "holds the hidden character U+200B"),
        ("no_such_tool", {}, "Unknown tool: no_such_tool"),
        # no guessing: a misspelt argument, a word for a boolean, a boolean for a number
        ("recall", {"query": "tea", "asof": "2001-01-01"}, "asof: not an argument of recall (it takes as_of, "),
        ("forget", {"subject": ALICE, "confirm": "yes"}, "confirm: Input should be a valid boolean"),
        ("recall", {"query": "tea", "k": True}, "k: Input should be a valid integer"),
        ("recall", {"query": "tea", "k": "5"}, "k: Input should be a valid integer"),
        ("recall", {"query": "tea", "include_shared": 1}, "include_shared: Input should be a valid boolean"),
        (
            "remember",
            {"text": "x", "facts": [{"subject": "A", "predicate": "p", "single_valued": "yes"}]},
            "facts.0.single_valued: Input should be a valid boolean",
        ),
    ],
)
def test_every_refusal_is_one_line(serve, name, arguments, message):
    """The SDK's own refusals (arguments against the tool's schema, an unknown tool) are worded
    like graphmem's: one line, no pydantic report."""
    text = refused(serve(allow_any_subject=True), name, **arguments)
    assert message in text and "\n" not in text and "pydantic" not in text, text


def test_scope_guard(serve):
    server = serve()
    for name, args in [
        ("remember", {"text": "Mallory likes tea."}),
        ("recall", {"query": "tea"}),
        ("blocks_list", {}),
        ("history", {"entity": "Mallory"}),
        ("forget", {"confirm": True}),
    ]:
        assert refused(server, name, subject=BOB, **args) == f"subject {BOB} is not allowed by this server", name
    assert "is not TYPE:ID" in refused(server, "recall", query="tea", subject="alice")
    allowed = serve(allow_subjects=(BOB,))
    call(allowed, "remember", text="Mallory likes tea.", subject=BOB)
    assert [h["scope"] for h in call(allowed, "recall", query="what does Mallory like?", subject=BOB)["hits"]] == [BOB]
    assert call(allowed, "recall", query="what does Mallory like?")["hits"] == []  # alice's scope: nothing
    assert call(serve(subject="user:Jose\u0301"), "recall", query="tea", subject=" user:Jos\u00e9 ")["hits"] == []
    anyone = serve(allow_any_subject=True)
    assert call(anyone, "recall", query="Mallory", subject="user:carol")["hits"] == []


def test_forget_needs_confirmation_then_erases(serve):
    server = serve()
    call(server, "remember", text="Alice likes green tea.")
    for args in ({}, {"confirm": False}):
        assert (
            refused(server, "forget", subject=ALICE, **args)
            == f"forget erases everything stored for {ALICE}: call it again with confirm: true"
        )
    assert call(server, "recall", query="what does Alice like?")["hits"]  # nothing was erased
    done = call(server, "forget", subject=ALICE, confirm=True)
    assert (done["subject"], done["project"]) == (ALICE, None)
    assert done["forgotten"]["units"] == 1 and done["forgotten"]["episodes"] == 1
    assert call(server, "recall", query="what does Alice like?")["hits"] == []


def test_blocks_within_the_writable_rule(serve, mem):
    server = serve()
    assert call(server, "blocks_list")["blocks"] == []
    assert (
        refused(server, "blocks_set", label="persona", value="Likes tea.")
        == "block 'persona' is new: give its token budget"
    )
    block = call(
        server,
        "blocks_set",
        label="persona",
        value="Prefers short answers.",
        token_budget=20,
        description="how to talk to the user",
    )
    assert (block["writable"], block["token_budget"], block["tokens"], block["scope"]) == (True, 20, 5, ALICE)
    assert call(server, "blocks_get", label="persona")["value"] == "Prefers short answers."
    over = refused(server, "blocks_set", label="persona", value="word " * 50)
    assert over.startswith("block 'persona' value is") and "over its budget of 20" in over
    assert refused(server, "blocks_get", label="nope") == f"no block 'nope' for {ALICE}"
    mem.store.put_block(
        MemoryBlock(scope=Scope.parse(ALICE), label="rules", value="Be kind.", token_budget=50, writable=False)
    )
    assert refused(server, "blocks_set", label="rules", value="Be rude.").startswith("block 'rules' is read-only")
    assert call(server, "blocks_get", label="rules")["value"] == "Be kind."
    context = call(server, "assemble", query="anything")
    assert "Prefers short answers." in context["text"] and len(context["trace"]["resident_ids"]) == 2


def test_a_server_project_that_reads_as_no_project_is_refused_when_configured():
    from pydantic import ValidationError

    from graphmem.errors import error_line

    with pytest.raises(ValidationError) as info:
        McpConfig(subject=ALICE, project="None")
    assert error_line(info.value) == "project: project 'None' reads as no project: leave the project out for none"


def test_fact_input_matches_the_fact_model():
    """`remember`'s structured facts carry exactly graphmem.domain.models.Fact's fields."""
    assert list(FactIn.model_fields) == list(Fact.model_fields)
    fact = FactIn(subject="Alice", predicate="lives_in", object="Paris", valid_at="2020-01-01").to_fact("facts.0")
    assert fact.valid_at.isoformat() == "2020-01-01T00:00:00+00:00"


def test_serve_without_the_extra_says_how_to_install(monkeypatch):
    from typer.testing import CliRunner

    from graphmem.cli import mcp as mcp_cli

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")] + ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "graphmem.mcp.server", raising=False)
    result = CliRunner().invoke(mcp_cli.app, ["--subject", "user:alice"])
    assert result.exit_code == 1
    assert (
        result.stderr.strip() == "error: the MCP server needs the mcp extra: pip install 'graphmem[mcp]' "
        "(in a checkout: .venv/bin/pip install -e '.[mcp]')"
    )


def test_mcp_imports_no_cli_module():
    """The MCP face stands beside the CLI, not on it: no module of graphmem.mcp imports one."""
    import ast
    from pathlib import Path

    import graphmem.mcp.server as module

    for path in Path(module.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith(("graphmem.cli", ".cli"))], path.name


def test_episodes_and_decisions_tools_record_the_mcp_actor(serve):
    server = serve()
    fact = {"subject": "Alice", "predicate": "lives_in", "single_valued": True}
    call(
        server,
        "remember",
        text="I live in Paris.",
        at="2020-01-01",
        facts=[{**fact, "object": "Paris", "valid_at": "2020-01-01"}],
    )
    call(
        server,
        "remember",
        text="I moved to Rome.",
        at="2021-01-01",
        facts=[{**fact, "object": "Rome", "valid_at": "2021-01-01"}],
    )
    episodes = call(server, "episodes_list")["episodes"]
    assert sorted(e["raw"] for e in episodes) == ["I live in Paris.", "I moved to Rome."]
    assert len(call(server, "episodes_list", offset=1)["episodes"]) == 1
    log = call(server, "decisions")["decisions"]
    assert sorted(d["op"] for d in log) == ["ADD", "UPDATE"] and {d["actor"] for d in log} == {"mcp"}
    assert [d["op"] for d in call(server, "decisions", op="UPDATE")["decisions"]] == ["UPDATE"]
    rome = next(e["id"] for e in episodes if e["raw"] == "I moved to Rome.")
    removed = call(server, "episode_delete", episode_id=rome)
    assert removed["actor"] == "mcp" and removed["restored"]
    assert [h["content"] for h in call(server, "recall", query="where does Alice live?")["hits"]] == [
        "Alice lives in Paris"
    ]
    assert refused(server, "episode_delete", episode_id=rome) == f"no episode {rome} in scope {ALICE}"


def test_an_api_key_bounds_the_subjects_a_call_may_name(serve, mem):
    from graphmem.mcp.server import CALLER

    server = serve(allow_any_subject=True)
    key, _ = mem.create_key([BOB])
    mark = CALLER.set(key)
    try:
        assert refused(server, "recall", query="tea") == f"key {key.id} does not hold subject {ALICE}"
        assert (
            refused(server, "forget", subject="user:carol", confirm=True)
            == f"key {key.id} does not hold subject user:carol"
        )
        written = call(server, "remember", text="Bob likes tea.", subject=BOB)
        assert call(server, "explain", unit_id=written["unit_ids"][0], subject=BOB)["decisions"][0]["actor"] == key.id
    finally:
        CALLER.reset(mark)
    assert call(server, "recall", query="tea")["hits"] == []  # without a key: the server's rules only


def test_include_shared_reads_the_shared_subject_only_where_a_call_may_name_it(serve, mem):
    from graphmem.mcp.server import CALLER

    mem.remember("The office code is 4711.", "shared:global")
    for tool, arguments in (
        ("recall", {"query": "office code", "include_shared": True}),
        ("assemble", {"query": "office code", "include_shared": True}),
    ):
        assert (
            refused(serve(), tool, **arguments) == "include_shared: subject shared:global is not allowed by this server"
        )
    assert "subject shared:global is not allowed" in refused(serve(), "recall", query="code", subject="shared:global")
    for allowed in (serve(allow_subjects=("shared:global",)), serve(allow_any_subject=True)):
        hits = call(allowed, "recall", query="office code", include_shared=True)["hits"]
        assert [h["content"] for h in hits] == ["The office code is 4711."]
        assert "4711" in call(allowed, "assemble", query="office code", include_shared=True)["text"]
    key, _ = mem.create_key([ALICE])
    mark = CALLER.set(key)
    try:
        assert (
            refused(serve(allow_any_subject=True), "recall", query="office code", include_shared=True)
            == f"include_shared: key {key.id} does not hold subject shared:global"
        )
    finally:
        CALLER.reset(mark)


def test_over_http_an_api_key_met_by_a_database_that_is_down_is_one_line_503(mem, monkeypatch, caplog):
    """The key lookup runs before any tool, outside their error handling: Neo4j down is the
    HTTP API's 503 with its one line, at once, never a 500 with a traceback."""
    from starlette.testclient import TestClient

    from graphmem.errors import Unavailable
    from graphmem.mcp.server import http_app

    key, token = mem.create_key([ALICE])

    def down(key_id: str):
        raise Unavailable("Neo4j at bolt://127.0.0.1:7687 is unreachable")

    monkeypatch.setattr(mem.store, "get_key", down)
    app = http_app(
        build_server(lambda: mem, McpConfig(subject=ALICE)), token="server-token", authenticate=mem.authenticate
    )
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/mcp", json=initialize, headers=headers)
        assert response.status_code == 503, response.text
        assert response.json() == {
            "error": {"code": "unavailable", "message": "Neo4j at bolt://127.0.0.1:7687 is unreachable"}
        }
        assert (
            client.post("/mcp", json=initialize, headers={**headers, "Authorization": "Bearer nope"}).status_code == 401
        )  # a token that is no key is not looked up
    assert "Traceback" not in caplog.text
