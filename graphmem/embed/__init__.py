"""Embedders behind the ``graphmem.ports.Embedder`` port (``graphmem.api.wiring.make_embedder``
picks one from settings)."""

from __future__ import annotations

from graphmem.embed.bge import BgeSmallEmbedder
from graphmem.embed.hashing import HashingEmbedder
from graphmem.embed.minilm import MiniLMEmbedder
from graphmem.embed.openai_compat import OpenAIEmbedder

__all__ = ["BgeSmallEmbedder", "HashingEmbedder", "MiniLMEmbedder", "OpenAIEmbedder"]
