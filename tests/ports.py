"""Ports for the throwaway servers the tests start, and a relay in front of one that a test can cut."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO


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


class Served:
    """A server process of a test: its port, and what it printed so far."""

    def __init__(self, port: int, log: IO[bytes]):
        self.port, self._log = port, log

    def output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")


@contextmanager
def serving(argv: list[str], what: str, **popen) -> Iterator[Served]:
    """Run ``argv --port P`` on a free port P until the block ends; enter once it accepts
    connections (``popen``: env, cwd)."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([*argv, "--port", str(port)], stdin=subprocess.DEVNULL, stdout=log, stderr=log, **popen)
        try:
            await_listening(proc, port, log, what)
            yield Served(port, log)
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def await_listening(proc: subprocess.Popen, port: int, log: IO[bytes], what: str, seconds: float = 30) -> None:
    """Wait until ``proc`` accepts connections on ``port`` of 127.0.0.1; fail the test with its
    output if it exits first or takes longer than ``seconds``."""
    import pytest

    deadline = time.monotonic() + seconds
    while True:
        if proc.poll() is not None:
            log.seek(0)
            pytest.fail(f"{what} exited {proc.returncode}: {log.read().decode(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer within {seconds:g} s")
            time.sleep(0.1)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Relay:
    """Forwards connections to the server while up; while down, closes each one it accepts
    (counted) and has closed the ones it was forwarding."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.up, self.refused = target, True, 0
        self._open: list[socket.socket] = []
        self._lock = threading.RLock()
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
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self._lock:
            self.up = False
            self.drop()

    def drop(self) -> None:
        """Close the connections it forwards (a restarted proxy, an idle timeout), staying up."""
        with self._lock:
            for s in self._open:
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self._open.clear()

    def restore(self) -> None:
        with self._lock:
            self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()
