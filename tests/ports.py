"""Ports for the throwaway Neo4j servers the tests start."""

from __future__ import annotations

import os
import socket

def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (a server should take it at once).

    Taken from ``GRAPHMEM_TEST_FREE_PORTS`` (e.g. ``7702-7709``) when it is set, for machines
    where each person runs servers on their own ports only; otherwise the system picks one.
    """
    span = os.environ.get("GRAPHMEM_TEST_FREE_PORTS")
    if not span:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]
    low, _, high = span.partition("-")
    for port in range(int(low), int(high or low) + 1):
        if _bindable(port):
            return port
    raise RuntimeError(f"no free port left in GRAPHMEM_TEST_FREE_PORTS={span}")


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
