"""Embedders behind the ``graphmem.ports.Embedder`` port, and ``make_embedder`` to pick one from settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.embed.hashing import HashingEmbedder
from graphmem.embed.minilm import MODEL_NAME as _MINILM_NAME
from graphmem.embed.minilm import MiniLMEmbedder
from graphmem.embed.openai_compat import OpenAIEmbedder

if TYPE_CHECKING:
    from graphmem.config import Settings
    from graphmem.ports import Embedder

__all__ = ["HashingEmbedder", "MiniLMEmbedder", "OpenAIEmbedder", "make_embedder"]


def make_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings.embedder`` names; nothing is loaded or called until first use."""
    if settings.embedder == "minilm":
        return MiniLMEmbedder(cache_dir=settings.home / "models" / _MINILM_NAME)
    if settings.embedder == "hashing":
        return HashingEmbedder()
    if settings.embedder == "openai":
        return OpenAIEmbedder(
            settings.embedding_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value() or None,
            dimensions=settings.embedding_dimensions,
        )
    raise ValueError(f"unknown embedder {settings.embedder!r}")  # unreachable: Settings validates it
