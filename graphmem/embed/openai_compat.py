"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphmem.domain.vectors import unit_length
from graphmem.errors import BackendError
from graphmem.llm.client import mapped_errors

if TYPE_CHECKING:
    import openai

_PROBE_TEXT = "dimension probe"


class OpenAIEmbedder:
    """Embedder over an ``openai`` client (``graphmem.llm.client.make_client``), which retries
    transient failures itself.

    Inputs go in batches of at most ``batch_size``; a failure left after the client's retries
    raises ``BackendError``. Vectors come back in input order, L2-normalised. ``dimension`` is
    ``dimensions`` when given, else learnt from the first response (reading it before any
    ``embed`` makes one probe request).
    """

    def __init__(
        self, client: openai.OpenAI, model: str, *, dimensions: int | None = None, batch_size: int = 256
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.name = model
        self._client = client
        self._dimensions = dimensions
        self._dimension: int | None = dimensions
        self.batch_size = batch_size
        self._base_url = str(client.base_url).rstrip("/")
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
        response = self._create(batch)
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
                f"{self._base_url} model {self.name} returned vectors of length {sorted(dims)}, "
                f"expected {self._dimension}"
            )
        self._dimension = dims.pop()
        result = []
        for v in vectors:
            scaled = unit_length(v)
            if scaled is None:
                raise BackendError(f"{self._base_url} model {self.name} returned a zero or non-finite vector")
            result.append(scaled)
        return result

    def _create(self, batch: list[str]) -> Any:
        kwargs: dict[str, Any] = {"model": self.name, "input": batch, "encoding_format": "float"}
        if self._dimensions is not None:
            kwargs["dimensions"] = self._dimensions
        with mapped_errors(f"embeddings request to {self._base_url}"):
            return self._client.embeddings.create(**kwargs)
