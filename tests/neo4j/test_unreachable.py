"""Neo4j going away under a long-running process (`graphmem serve`): the transaction that finds
it gone fails as unavailable at once (one connection attempt tells a server that is gone from a
dropped connection, which is retried); while it stays gone, each later transaction makes one
connection attempt and fails at once; once it is back, transactions work again. The server sits
behind a TCP relay the test can cut."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.errors import Unavailable
from graphmem.server import local_password
from graphmem.settings.config import Settings, default_home
from tests.ports import Relay

pytestmark = pytest.mark.neo4j


def relayed(settings: Settings, retry_seconds: float = 30.0) -> tuple[Relay, Neo4jConnection]:
    parts = urlsplit(settings.neo4j_uri)
    if parts.scheme != "bolt":
        pytest.skip("the relay forwards one direct Bolt server")
    password = settings.neo4j_password.get_secret_value() or local_password(settings.neo4j_uri, default_home())
    relay = Relay((parts.hostname, parts.port))
    return relay, Neo4jConnection(
        Settings.from_env(
            neo4j_uri=f"bolt://127.0.0.1:{relay.port}", neo4j_password=password, neo4j_retry_seconds=retry_seconds
        )
    )


def test_a_server_gone_is_reported_at_once_and_a_returned_one_is_used_again(settings: Settings):
    relay, conn = relayed(settings)  # the default retry budget, 30 s: none of it is waited out
    try:
        assert conn.read("admin/server_version")  # up: a pooled connection now exists
        for _ in range(2):  # and the next outage alike
            relay.cut()
            before, started = relay.refused, time.monotonic()
            with pytest.raises(Unavailable, match="unreachable"):
                conn.read("admin/server_version")  # the pooled connection is gone, and so is the server
            assert time.monotonic() - started < 2.0 and relay.refused <= before + 2  # the attempt, the check
            for _ in range(3):
                before, started = relay.refused, time.monotonic()
                with pytest.raises(Unavailable, match="unreachable"):
                    conn.write("admin/server_version")
                assert relay.refused == before + 1 and time.monotonic() - started < 2.0  # one attempt
            relay.restore()
            assert conn.read("admin/server_version")  # back: used again, no restart
    finally:
        conn.close()
        relay.close()


def test_a_dropped_connection_to_a_server_that_is_there_is_retried(settings: Settings):
    relay, conn = relayed(settings)
    try:
        assert conn.read("admin/server_version")
        relay.drop()  # the pooled connection dies; the server is still there
        assert conn.write("admin/server_version") and relay.refused == 0
    finally:
        conn.close()
        relay.close()
