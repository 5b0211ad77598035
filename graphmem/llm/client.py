"""The one place graphmem builds clients for OpenAI-compatible endpoints and maps their errors.

Transport retries are the ``openai`` client's own (``max_retries``): exponential backoff with
jitter on connection errors, 408, 409, 429 and 5xx, honouring the server's Retry-After. A
failure left after them becomes ``BackendError`` with one line naming the call; its cause is
the client's exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from graphmem.errors import BackendError, ConfigurationError

if TYPE_CHECKING:
    import openai

    from graphmem.settings.config import Settings

#: Retries per request after the first attempt (the client's default is 2; embedding a large
#: ingest makes many requests, and a rate limit should slow it down, not stop it).
MAX_RETRIES = 4
#: Seconds a health probe waits for an endpoint.
PROBE_TIMEOUT = 5.0


def make_client(
    settings: Settings,
    purpose: str,
    role: Literal["llm", "embedding"] = "llm",
    timeout: float = 60.0,
    max_retries: int = MAX_RETRIES,
) -> openai.OpenAI:
    """A client for the endpoint ``settings.endpoint(role)`` names (no base URL: api.openai.com).

    Raises:
        ConfigurationError: neither an API key nor a base URL is set for ``role``; the message
            names ``purpose`` (what needed the client) and the settings that would give them.
    """
    import openai  # imported here: it costs ~1 s, and only the OpenAI-backed parts need it

    base_url, api_key = settings.endpoint(role)
    if not api_key and base_url is None:
        raise ConfigurationError(missing_endpoint(purpose, role))
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key or "unused",  # local servers often need no key, but the client wants one
        max_retries=max_retries,
        timeout=timeout,
    )


def missing_endpoint(purpose: str, role: Literal["llm", "embedding"]) -> str:
    """Why ``purpose`` cannot run: no endpoint for ``role``, and the settings that give one."""
    own = f"GRAPHMEM_{role.upper()}"
    return (
        f"{purpose} needs an OpenAI-compatible endpoint: set {own}_BASE_URL or OPENAI_BASE_URL "
        f"(a local server), or {own}_API_KEY or OPENAI_API_KEY (api.openai.com)"
    )


def probe(client: openai.OpenAI, purpose: str) -> str:
    """Check that the endpoint answers (its model list, one attempt of a few seconds) before
    work that would fail half-way without it; returns a line saying so.

    Raises:
        BackendError: it does not answer, naming ``purpose`` and the URL.
    """
    with mapped_errors(f"{purpose} at {client.base_url}"):
        client.with_options(max_retries=0, timeout=PROBE_TIMEOUT).models.list()
    return f"{purpose}: {client.base_url} answers"


def one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters (model output can be long)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@contextmanager
def mapped_errors(what: str) -> Iterator[None]:
    """Turn the client's errors, raised once its retries are spent, into ``BackendError``."""
    import openai

    try:
        yield
    except openai.APIStatusError as exc:
        # The server's own message when its error body has one (``exc.message`` prefixes it
        # with "Error code: NNN - ").
        body = exc.body if isinstance(exc.body, dict) else {}
        raise BackendError(
            f"{what} failed ({exc.status_code}): {one_line(body.get('message') or exc.message)}"
        ) from exc
    except openai.OpenAIError as exc:  # connection errors and timeouts included
        raise BackendError(f"{what} failed: {one_line(exc)}") from exc
