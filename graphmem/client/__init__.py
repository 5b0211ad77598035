"""A typed Python client of graphmem's HTTP API (the ``client`` extra: httpx and tenacity).

    from graphmem.client import Client

    with Client("http://127.0.0.1:8080", key="gm_...") as mem:
        mem.remember("I moved to Berlin.", "user:alice")
        for hit in mem.recall("where does alice live?", "user:alice").hits:
            print(hit.confidence, hit.content)

``Client`` and ``AsyncClient`` (every method awaited) have the facade's method names and
arguments and raise its errors (``graphmem.errors``: 404 ``NotFound``, 422 ``InvalidInput``,
503 ``Unavailable``...). A 503 or a failed connection is retried with exponential backoff;
writes are safe to retry, as every episode is sent with its id. Neither imports the facade,
FastAPI or the Neo4j driver.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import tenacity

from graphmem.client.calls import Answer, Call, Pause, ServerError, Steps, error_of
from graphmem.client.operations import Operations
from graphmem.errors import Unavailable

__all__ = ["AsyncClient", "Client", "ServerError"]

#: Seconds a call may keep retrying (503s and failed connections) before its error is raised.
RETRY_FOR = 30.0
#: Seconds one request may take: above the server's own timeout (GRAPHMEM_HTTP_TIMEOUT, 60 s),
#: which answers a late write with a job to poll.
TIMEOUT = 90.0


def _retryable(call: Call) -> tenacity.retry_base:
    """Retry a 503 and a connection never made; a connection lost mid-request only when the
    call is safe to send again."""
    lost = (httpx.TransportError,) if call.resend else (httpx.ConnectError, httpx.ConnectTimeout)
    return tenacity.retry_if_exception_type((Unavailable, *lost))


def _policy(call: Call, retry_for: float) -> dict[str, Any]:
    return {
        "retry": _retryable(call),
        "wait": tenacity.wait_exponential_jitter(multiplier=0.1, max=5.0),
        "stop": tenacity.stop_after_delay(retry_for),
        "reraise": True,
    }


def _request(call: Call) -> dict[str, Any]:
    headers = {"Content-Type": call.content_type} if call.content_type else {}
    sent: dict[str, Any] = {"params": dict(call.params), "headers": headers}
    if call.content is not None:
        sent["content"] = call.content
    elif call.body is not None:
        sent["json"] = call.body
    return sent


def _answer(response: httpx.Response) -> Answer:
    answer = Answer(response.status_code, response.text, dict(response.headers))
    if answer.status == 503:
        raise error_of(answer)  # retried; raised as Unavailable once the retries are spent
    return answer


def _headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


class Client(Operations):
    """Synchronous client: ``Client(url, key)``; close it, or use it in a ``with`` block."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        key: str | None = None,
        timeout: float = TIMEOUT,
        retry_for: float = RETRY_FOR,
        transport: httpx.BaseTransport | None = None,
    ):
        self.retry_for = retry_for
        self.http = httpx.Client(base_url=url, headers=_headers(key), timeout=timeout, transport=transport)

    def _send(self, call: Call) -> Answer:
        for attempt in tenacity.Retrying(**_policy(call, self.retry_for)):
            with attempt:
                return _answer(self.http.request(call.method, call.path, **_request(call)))
        raise AssertionError("unreachable")  # tenacity re-raises the last error

    def _run(self, steps: Steps[Any]) -> Any:
        reply: Answer | None = None
        try:
            while True:
                step = steps.send(reply)
                if isinstance(step, Pause):
                    time.sleep(step.seconds)
                    reply = None
                else:
                    reply = self._send(step)
        except StopIteration as done:
            return done.value

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(Operations):
    """Asynchronous client: the same methods, each awaited (``await mem.recall(...)``)."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        key: str | None = None,
        timeout: float = TIMEOUT,
        retry_for: float = RETRY_FOR,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.retry_for = retry_for
        self.http = httpx.AsyncClient(base_url=url, headers=_headers(key), timeout=timeout, transport=transport)

    async def _send(self, call: Call) -> Answer:
        async for attempt in tenacity.AsyncRetrying(**_policy(call, self.retry_for)):
            with attempt:
                return _answer(await self.http.request(call.method, call.path, **_request(call)))
        raise AssertionError("unreachable")

    async def _steps(self, steps: Steps[Any]) -> Any:
        reply: Answer | None = None
        try:
            while True:
                step = steps.send(reply)
                if isinstance(step, Pause):
                    await asyncio.sleep(step.seconds)
                    reply = None
                else:
                    reply = await self._send(step)
        except StopIteration as done:
            return done.value

    def _run(self, steps: Steps[Any]) -> Any:
        return self._steps(steps)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
