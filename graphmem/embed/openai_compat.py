"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint, with our own bounded retries."""

from __future__ import annotations

import math
import random
import threading
import time
from typing import Any, Callable, Sequence

from graphmem.errors import BackendError, ConfigurationError

_PROBE_TEXT = "dimension probe"


class OpenAIEmbedder:
    """Embedder on the ``openai`` package's client against ``base_url`` (None: api.openai.com).

    Inputs go in batches of at most ``batch_size``; 429, 5xx and connection errors are retried
    with exponential backoff and jitter, at most ``max_attempts`` tries and ``max_total_wait``
    seconds of sleep per batch (the client's own retries are off). Any other failure, or the last
    retryable one, raises ``BackendError``. Vectors come back in input order, L2-normalised.
    ``dimension`` is ``dimensions`` when given, else learnt from the first response (reading it
    before any ``embed`` makes one probe request).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 256,
        max_attempts: int = 5,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        max_total_wait: float = 30.0,
        timeout: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import openai  # imported here: it costs ~1 s, and only this embedder needs it

        if max_attempts < 1 or batch_size < 1:
            raise ValueError("max_attempts and batch_size must be at least 1")
        if not api_key:
            if base_url is None:
                raise ConfigurationError("the openai embedder needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
            api_key = "unused"  # local OpenAI-compatible servers often need no key, but the client wants one
        self.name = model
        self._dimensions = dimensions
        self._dimension: int | None = dimensions
        self.batch_size = batch_size
        self.max_attempts = max_attempts
        self.base_delay, self.max_delay, self.max_total_wait = base_delay, max_delay, max_total_wait
        self._sleep = sleep
        self._base_url = base_url or "https://api.openai.com/v1"
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)
        self._probe_lock = threading.Lock()

    @property
    def dimension(self) -> int:
        """Length of every vector; discovered with one request if not configured."""
        if self._dimension is None:
            with self._probe_lock:
                if self._dimension is None:
                    self.embed([_PROBE_TEXT])
        assert self._dimension is not None
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, same order; [] for []."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._embed_batch(list(texts[start : start + self.batch_size])))
        return out

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        response = self._create_with_retries(batch)
        try:
            items = sorted(response.data, key=lambda item: item.index)
            vectors = [list(map(float, item.embedding)) for item in items]
        except (AttributeError, TypeError, ValueError) as exc:
            raise BackendError(f"{self._base_url} returned a malformed embeddings response: {exc}") from exc
        if [item.index for item in items] != list(range(len(batch))):
            raise BackendError(f"{self._base_url} returned {len(items)} embeddings for {len(batch)} inputs")
        dims = {len(v) for v in vectors}
        if len(dims) != 1 or (self._dimension is not None and dims != {self._dimension}):
            raise BackendError(
                f"{self._base_url} model {self.name} returned vectors of length {sorted(dims)}, expected {self._dimension}"
            )
        self._dimension = dims.pop()
        result = []
        for v in vectors:
            norm = math.sqrt(sum(x * x for x in v))
            if not norm or not math.isfinite(norm):
                raise BackendError(f"{self._base_url} model {self.name} returned a zero or non-finite vector")
            result.append([x / norm for x in v])
        return result

    def _create_with_retries(self, batch: list[str]) -> Any:
        import openai

        kwargs: dict[str, Any] = {"model": self.name, "input": batch, "encoding_format": "float"}
        if self._dimensions is not None:
            kwargs["dimensions"] = self._dimensions
        waited = 0.0
        for attempt in range(1, self.max_attempts + 1):
            try:
                return self._client.embeddings.create(**kwargs)
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500:
                    raise BackendError(
                        f"{self._base_url} rejected the embeddings request ({exc.status_code}): {exc.message}"
                    ) from exc
                last: Exception = exc
                retry_after = _retry_after(exc)
            except openai.APIConnectionError as exc:  # includes timeouts
                last, retry_after = exc, None
            except openai.OpenAIError as exc:  # e.g. a response body that fails validation
                raise BackendError(f"embeddings request to {self._base_url} failed: {exc}") from exc
            # Exponential backoff with "equal jitter": half fixed, half random, so parallel
            # clients spread out; a server's Retry-After is honoured up to max_delay.
            cap = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
            delay = min(self.max_delay, max(cap / 2 + random.uniform(0, cap / 2), retry_after or 0.0))
            if attempt == self.max_attempts or waited + delay > self.max_total_wait:
                break
            self._sleep(delay)
            waited += delay
        raise BackendError(
            f"embeddings request to {self._base_url} failed after {attempt} attempts ({waited:.1f} s of backoff): {last}"
        ) from last


def _retry_after(exc: Any) -> float | None:
    """Seconds from a Retry-After header in seconds form, if any."""
    try:
        value = float(exc.response.headers.get("retry-after", ""))
    except (AttributeError, TypeError, ValueError):
        return None
    return value if value >= 0 else None
