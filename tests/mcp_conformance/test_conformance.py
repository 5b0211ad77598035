"""The MCP conformance suite against `graphmem mcp serve`, over streamable HTTP and over stdio
(through stdio_bridge.py), checked scenario by scenario against expected.txt (run.py)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("mcp")

from tests.conftest import fresh_scope
from tests.mcp_conformance import run

#: What passed on both transports before issue 42 (suite 0.1.16), and what it added.
BEFORE = {
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "resources-list",
    "prompts-list",
}
ADDED = {"logging-set-level", "completion-complete"}


def test_the_list_keeps_what_passed_and_leaves_out_only_fixtures():
    wanted = run.expected()
    assert {s for s, e in wanted.items() if e.http == e.stdio == "pass"} >= BEFORE | ADDED
    assert {s for s, e in wanted.items() if e.http == "pass"} >= {
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    }
    assert all(e.reason.startswith("fixture:") for e in wanted.values() if "fail" in (e.http, e.stdio))


@pytest.mark.parametrize("transport", run.TRANSPORTS)
def test_conformance_suite(transport, conn):  # conn: Neo4j is up and migrated before the server starts
    if not run.installed():
        message = "the conformance suite is not installed: python -m tests.mcp_conformance.run --install"
        if os.environ.get("GRAPHMEM_CONFORMANCE") == "required":  # .ci/run installs it
            pytest.fail(message)
        pytest.skip(message)
    scope = fresh_scope()
    report, problems = run.check(transport, f"{scope.subject_type.value}:{scope.subject_id}")
    assert not problems, report + "\n" + "\n".join(problems)
