"""Neo4j going away under a long-running process (`graphmem serve`): the transaction that finds
it gone retries for `GRAPHMEM_NEO4J_RETRY_SECONDS`, then fails as unavailable; while it stays
gone, each later transaction makes one connection attempt and fails at once; once it is back,
transactions work again. The server sits behind a TCP relay the test can cut."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit

import pytest

from graphmem.adapters.neo4j_driver import Neo4jConnection
from graphmem.config import Settings, default_home
from graphmem.errors import Unavailable
from graphmem.server import local_password

pytestmark = pytest.mark.neo4j


class Relay:
    """Forwards connections to the server while up; while down, closes each one it accepts
    (counted) and has closed the ones it was forwarding."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.up, self.refused = target, True, 0
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                if not self.up:
                    self.refused += 1
                    client.close()
                    continue
                server = socket.create_connection(self.target)
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        with self._lock:
            self.up = False
            for s in self._open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._open.clear()

    def restore(self) -> None:
        with self._lock:
            self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


def test_a_server_still_gone_is_reported_at_once_and_a_returned_one_is_used_again(settings: Settings):
    parts = urlsplit(settings.neo4j_uri)
    if parts.scheme != "bolt":
        pytest.skip("the relay forwards one direct Bolt server")
    password = settings.neo4j_password.get_secret_value() or local_password(settings.neo4j_uri, default_home())
    relay = Relay((parts.hostname, parts.port))
    conn = Neo4jConnection(Settings.from_env(neo4j_uri=f"bolt://127.0.0.1:{relay.port}", neo4j_password=password,
                                             neo4j_retry_seconds=1.0))
    try:
        assert conn.read("admin/server_version")  # up: a pooled connection now exists
        relay.cut()
        with pytest.raises(Unavailable, match="unreachable"):
            conn.read("admin/server_version")  # the pooled connection is gone; retried for 1 s
        assert relay.refused > 1  # the retry loop tried again and again
        for _ in range(3):
            before = relay.refused
            with pytest.raises(Unavailable, match="unreachable"):
                conn.write("admin/server_version")
            assert relay.refused == before + 1  # one attempt, no retry loop
        relay.restore()
        assert conn.read("admin/server_version")
        relay.cut()
        before = relay.refused
        with pytest.raises(Unavailable):
            conn.read("admin/server_version")
        assert relay.refused > before + 1  # back to normal: the next outage is retried again
    finally:
        conn.close()
        relay.close()
