"""The one place graphmem builds clients for OpenAI-compatible endpoints and maps their errors.

Transport retries are the ``openai`` client's own (``max_retries``): exponential backoff with
jitter on connection errors, 408, 409, 429 and 5xx, honouring the server's Retry-After. A
failure left after them becomes ``BackendError`` with one line naming the call; its cause is
the client's exception.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from .errors import BackendError, ConfigurationError

if TYPE_CHECKING:
    import openai

    from .config import Settings

#: Retries per request after the first attempt (the client's default is 2; embedding a large
#: ingest makes many requests, and a rate limit should slow it down, not stop it).
MAX_RETRIES = 4


def make_client(settings: "Settings", purpose: str, timeout: float = 60.0,
                max_retries: int = MAX_RETRIES) -> "openai.OpenAI":
    """A client for ``settings.openai_base_url`` (None: api.openai.com).

    Raises:
        ConfigurationError: neither an API key nor a base URL is set; the message names
            ``purpose`` (what needed the client).
    """
    import openai  # imported here: it costs ~1 s, and only the OpenAI-backed parts need it

    api_key = settings.openai_api_key.get_secret_value()
    if not api_key and settings.openai_base_url is None:
        raise ConfigurationError(f"{purpose} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
    return openai.OpenAI(
        base_url=settings.openai_base_url,
        api_key=api_key or "unused",  # local servers often need no key, but the client wants one
        max_retries=max_retries,
        timeout=timeout,
    )


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
        raise BackendError(f"{what} failed ({exc.status_code}): {one_line(body.get('message') or exc.message)}") from exc
    except openai.OpenAIError as exc:  # connection errors and timeouts included
        raise BackendError(f"{what} failed: {one_line(exc)}") from exc
