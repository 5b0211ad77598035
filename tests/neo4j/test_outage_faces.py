"""Every face fails fast and cleanly while Neo4j is gone, for every kind of credential, and
recovers without a restart (issue 45): `graphmem serve` with an API key, `graphmem mcp serve
--transport http` with its token and with an API key, and the CLI, all in front of a relay the
test cuts. Each answers a one-line 503, a tool error or exit 1 within 2 s of the cut (the
driver's retry window, 30 s, waited out on every request before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from graphmem.server import local_password
from graphmem.settings.config import default_home
from tests.conftest import fresh_scope
from tests.ports import Relay, serving

pytestmark = pytest.mark.neo4j

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "outage-token-" + os.urandom(8).hex()
FAST = 2.0
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def environment(uri: str, password: str = "") -> dict[str, str]:
    out = dict(os.environ, NEO4J_URI=uri, GRAPHMEM_MCP_TOKEN=TOKEN)
    if password:  # the relay's port has no password file of its own
        out["NEO4J_PASSWORD"] = password
    out.setdefault("GRAPHMEM_EMBEDDER", "hashing")
    out.pop("GRAPHMEM_MCP_SUBJECT", None)
    return out


def graphmem(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphmem.cli.main", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def post(url: str, body: dict, headers: dict[str, str]) -> tuple[int, dict[str, str], str, float]:
    """(status, headers, body, seconds) of one POST."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    began = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read().decode(), time.monotonic() - began
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode(), time.monotonic() - began


def rpc(method: str, params: dict, id_: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def message(body: str) -> dict:
    """The JSON-RPC message of a streamable HTTP answer (plain JSON or one SSE event)."""
    data = [line[5:] for line in body.splitlines() if line.startswith("data:")]
    return json.loads(data[-1] if data else body)


class Mcp:
    """A raw streamable HTTP MCP client session over one bearer."""

    def __init__(self, url: str, bearer: str):
        self.url, self.headers = url, {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}

    def initialize(self) -> tuple[int, str, float]:
        status, headers, body, took = post(
            self.url,
            rpc(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "outage-test", "version": "1"},
                },
            ),
            self.headers,
        )
        if status == 200:
            session = {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
            if session:
                self.headers["Mcp-Session-Id"] = session
            post(self.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers)
        return status, body, took

    def recall(self, subject: str) -> tuple[int, dict, float]:
        status, _, body, took = post(
            self.url,
            rpc("tools/call", {"name": "recall", "arguments": {"query": "tea", "subject": subject}}, 2),
            self.headers,
        )
        return status, message(body) if status == 200 else {"raw": body}, took


@contextmanager
def faces(env: dict[str, str], subject: str):
    """`graphmem serve` and `graphmem mcp serve --transport http`, both with ``env``."""
    argv = [sys.executable, "-m", "graphmem.cli.main"]
    with (
        serving([*argv, "serve"], "graphmem serve", env=env, cwd=ROOT) as http,
        serving(
            [*argv, "mcp", "serve", "--transport", "http", "--subject", subject, "--allow-any-subject"],
            "mcp serve",
            env=env,
            cwd=ROOT,
        ) as mcp,
    ):
        yield f"http://127.0.0.1:{http.port}", f"http://127.0.0.1:{mcp.port}/mcp"


def test_every_face_fails_fast_while_neo4j_is_gone_and_recovers(settings):
    parts = urlsplit(settings.neo4j_uri)
    if parts.scheme != "bolt":
        pytest.skip("the relay forwards one direct Bolt server")
    scope = fresh_scope()
    subject = f"{scope.subject_type.value}:{scope.subject_id}"
    made = graphmem(environment(settings.neo4j_uri), "keys", "create", "--subject", subject, "--json")
    key = json.loads(made.stdout)["key"]
    relay = Relay((parts.hostname, parts.port))
    password = settings.neo4j_password.get_secret_value() or local_password(settings.neo4j_uri, default_home())
    env = environment(f"bolt://127.0.0.1:{relay.port}", password)
    recall_url = f"/v1/subjects/{subject}/recall"
    bearer = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        with faces(env, subject) as (http, mcp_url):
            assert post(http + recall_url, {"query": "tea"}, bearer)[0] == 200  # up: connections pooled
            served = Mcp(mcp_url, TOKEN)
            assert served.initialize()[0] == 200 and "result" in served.recall(subject)[1]
            started = time.monotonic()
            baseline = graphmem(env, "--version")  # the CLI's own start-up, to tell apart from waiting
            cli_start = time.monotonic() - started

            relay.cut()
            for _ in range(2):  # the first request after the cut, and the next
                status, _, body, took = post(http + recall_url, {"query": "tea"}, bearer)
                assert status == 503 and took < FAST, (status, took, body)
                error = json.loads(body)["error"]
                assert error["code"] == "unavailable" and "unreachable" in error["message"]
                assert "\n" not in error["message"]

                status, body, took = Mcp(mcp_url, key).initialize()  # an API key is looked up in Neo4j
                assert status == 503 and took < FAST and "unreachable" in json.loads(body)["error"]["message"]

                status, answer, took = served.recall(subject)  # the server's token: the tool fails
                assert status == 200 and took < FAST and answer["result"]["isError"], answer
                assert "unreachable" in answer["result"]["content"][0]["text"]

            began = time.monotonic()
            failed = graphmem(env, "recall", "tea", "--subject", subject)
            assert failed.returncode == 1 and time.monotonic() - began < cli_start + FAST, failed
            assert failed.stderr.count("\n") == 1 and "unreachable" in failed.stderr
            assert baseline.returncode == 0

            relay.restore()  # back: every face works again, nothing restarted
            assert post(http + recall_url, {"query": "tea"}, bearer)[0] == 200
            assert Mcp(mcp_url, key).initialize()[0] == 200
            assert "result" in served.recall(subject)[1] and not served.recall(subject)[1]["result"]["isError"]
            assert graphmem(env, "recall", "tea", "--subject", subject).returncode == 0
    finally:
        relay.close()
