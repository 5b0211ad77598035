"""Rerankers behind the ``graphmem.ports.Reranker`` port: recall's optional second stage
(``graphmem.pipelines.rerank``); ``graphmem.api.wiring.make_reranker`` builds one from settings."""

from __future__ import annotations

from graphmem.rerank.msmarco import CrossEncoderReranker

__all__ = ["CrossEncoderReranker"]
