"""`graphmem keys`, and what `graphmem serve` and `mcp serve --transport http` refuse before
they listen, over the in-memory adapters. Serving for real is in tests/neo4j/test_http.py."""

from __future__ import annotations

import socket
import stat

import pytest

from graphmem.api import GraphMem
from graphmem.cli.common import CliState
from tests.cli import as_json, invoker, one_error_line
from tests.ports import free_port


@pytest.fixture
def mem(memory_mem: GraphMem) -> GraphMem:
    return memory_mem


@pytest.fixture
def run(mem: GraphMem, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    monkeypatch.delenv("GRAPHMEM_MCP_TOKEN", raising=False)

    def invoke(*args):  # a fresh context each time: settings are read per process
        return invoker(CliState(factory=lambda settings, **options: mem))(*args)

    return invoke


@pytest.fixture
def busy():
    """A port something already listens on."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the port may be in TIME_WAIT
        sock.bind(("127.0.0.1", free_port()))
        sock.listen()
        yield sock.getsockname()[1]


def test_keys_create_list_revoke(run, mem):
    made = as_json(run("keys", "create", "--subject", "user:alice", "-s", "agent:planner", "--name", "ci", "--json"))
    assert set(made) == {"id", "key", "subjects", "admin", "name"}
    assert (made["subjects"], made["admin"], made["name"]) == (["user:alice", "agent:planner"], False, "ci")
    assert mem.authenticate(made["key"]).id == made["id"]
    plain = run("keys", "create", "--admin")
    assert plain.exit_code == 0 and plain.stdout.strip().startswith("gm_") and "not shown again" in plain.stderr
    listed = as_json(run("keys", "list", "--json"))["keys"]
    assert [k["id"] for k in listed][0] == made["id"] and all("key" not in k and "digest" not in k for k in listed)
    revoked = as_json(run("keys", "revoke", made["id"], "--json"))
    assert revoked["revoked_at"] and mem.authenticate(made["key"]) is None
    assert one_error_line(run("keys", "revoke", "nope")) == "error: no key nope"
    assert one_error_line(run("keys", "create", "--subject", "alice")).startswith(
        "error: subject 'alice' is not TYPE:ID"
    )
    assert one_error_line(run("keys", "create")) == "error: a key needs at least one --subject, or --admin"
    assert one_error_line(run("keys", "create", "--admin", "--name", "n" * 201)) == (
        "error: a key's name is at most 200 characters, not 201"
    )


def test_serve_refuses_without_keys_and_off_loopback_without_auth(run, busy):
    result = run("serve", "--port", busy)
    assert result.exit_code == 1 and one_error_line(result).startswith("error: no API key defined")
    result = run("serve", "--host", "0.0.0.0", "--insecure-no-auth")
    assert result.exit_code == 2 and "--insecure-no-auth is refused on 0.0.0.0" in one_error_line(result)
    made = as_json(run("keys", "create", "--subject", "user:alice", "--json"))
    run("keys", "revoke", made["id"])
    result = run("serve", "--port", busy)
    assert result.exit_code == 1 and one_error_line(result).startswith("error: no live API key (1 revoked)")
    run("keys", "create", "--subject", "user:alice")
    result = run("serve", "--port", busy)
    assert result.exit_code == 1 and one_error_line(result).startswith(f"error: cannot listen on 127.0.0.1:{busy}")
    assert "graphmem API on" not in result.output


def test_mcp_http_refuses_off_loopback_without_auth_and_a_busy_port(run, busy, tmp_path):
    result = run("mcp", "serve", "-s", "user:alice", "--transport", "http", "--host", "10.1.2.3", "--insecure-no-auth")
    assert result.exit_code == 2 and "--insecure-no-auth is refused on 10.1.2.3" in one_error_line(result)
    result = run("mcp", "serve", "-s", "user:alice", "--transport", "http", "--port", busy)
    assert result.exit_code == 1 and one_error_line(result).startswith(f"error: cannot listen on 127.0.0.1:{busy}")
    assert "/mcp" not in result.output and not (tmp_path / "mcp-token").exists()


def test_mcp_bearer_token_comes_from_env_file_or_is_generated_once(run, tmp_path, monkeypatch):
    from graphmem.cli import mcp

    served: list[str] = []
    monkeypatch.setattr("graphmem.mcp.server.run_server", lambda *a, token=None, **k: served.append(token))
    args = ("mcp", "serve", "-s", "user:alice", "--transport", "http", "--port", free_port())
    first = run(*args)
    assert first.exit_code == 0, first.output
    path = tmp_path / mcp.TOKEN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and served[0] == path.read_text().strip()
    assert f"generated a bearer token in {path}" in first.stderr and served[0] not in first.output
    assert run(*args).exit_code == 0 and served[1] == served[0]  # kept for the hosts configured with it
    given = tmp_path / "token"
    given.write_text("from-a-file\n")
    given.chmod(0o640)
    assert (
        one_error_line(run(*args, "--token-file", given))
        == f"error: --token-file: {given} can be read by other users (mode 0640): chmod go-rwx {given}"
    )
    tmp_path.chmod(0o777)  # the home: another user could have put the token there
    assert one_error_line(run(*args)) == (
        f"error: --token-file: {tmp_path} can be written by other users "
        f"(mode 0777): chmod go-w {tmp_path}, or choose a GRAPHMEM_HOME you own"
    )
    tmp_path.chmod(0o700)
    given.chmod(0o600)
    assert run(*args, "--token-file", given).exit_code == 0 and served[2] == "from-a-file"
    monkeypatch.setenv("GRAPHMEM_MCP_TOKEN", "from-env")
    assert run(*args).exit_code == 0 and served[3] == "from-env"
    given.write_text("")
    assert one_error_line(run(*args, "--token-file", given)) == f"error: --token-file {given}: the file is empty"


@pytest.mark.parametrize("host, checked", [("127.0.0.1", True), ("localhost", True), ("0.0.0.0", False)])
def test_serve_on_a_loopback_address_answers_only_requests_for_this_machine(run, monkeypatch, host, checked):
    """DNS rebinding: a page whose name resolves to 127.0.0.1 sends that name as Host."""
    pytest.importorskip("uvicorn")
    from starlette.testclient import TestClient

    served = []
    monkeypatch.setattr("uvicorn.Server.run", lambda self, sockets=None: served.append(self.config.app))
    extra = ("--insecure-no-auth",) if checked else ()
    if not checked:
        run("keys", "create", "--admin")
    assert run("serve", "--host", host, "--port", free_port(), *extra).exit_code == 0
    with TestClient(served[0], base_url="http://127.0.0.1:8080") as client:
        assert client.get("/healthz").status_code == 200
        rebound = client.get("/healthz", headers={"Host": "rebind.evil.example:8080"})
    assert rebound.status_code == (421 if checked else 200)
