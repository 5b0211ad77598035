"""The composition root: a ``GraphMem`` on Neo4j built from ``Settings``.

Everything that picks an implementation from settings lives here: the embedder, the policy,
the extractor registry, and ``connect``, which joins them to the Neo4j adapters. The facade
(``graphmem.api``) only composes what it is given; ``GraphMem.connect`` delegates here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.adapters.neo4j.admin import Neo4jDatabase
from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.embed import HashingEmbedder, MiniLMEmbedder, OpenAIEmbedder
from graphmem.embed.minilm import MODEL_NAME as MINILM
from graphmem.extract import FactsExtractor, NoneExtractor
from graphmem.extract.llm import LLMExtractor
from graphmem.extract.rule import RuleExtractor
from graphmem.llm.client import make_client
from graphmem.policy import BasePolicy, PolicyConfig
from graphmem.policy.llm import LLMPolicy
from graphmem.policy.rule import RulePolicy
from graphmem.ports import Embedder, Extractor
from graphmem.server.conf import TX_LOG_ROTATION_KIB
from graphmem.settings.config import Settings

if TYPE_CHECKING:
    from graphmem.api import GraphMem


def make_embedder(settings: Settings) -> Embedder:
    """The embedder ``settings.embedder`` names; nothing is loaded or called until first use."""
    if settings.embedder == "hashing":
        return HashingEmbedder()
    if settings.embedder == "openai":
        client = make_client(settings, "the openai embedder", "embedding")
        return OpenAIEmbedder(client, settings.embedding_model, dimensions=settings.embedding_dimensions)
    return MiniLMEmbedder(cache_dir=settings.home / "models" / MINILM)


def make_policy(settings: Settings) -> BasePolicy:
    """The policy ``settings.policy`` names: rules (default) or an OpenAI-compatible model."""
    if settings.policy == "llm":
        return LLMPolicy(make_client(settings, "the llm policy"), settings.llm_model)
    return RulePolicy(PolicyConfig())


def make_extractors(settings: Settings | None = None) -> dict[str, Extractor]:
    """The extractors by name: ``facts``, ``rule`` and ``none`` always; ``llm`` when
    ``settings`` name an OpenAI-compatible endpoint or key for the model."""
    extractors: dict[str, Extractor] = {"facts": FactsExtractor(), "rule": RuleExtractor(), "none": NoneExtractor()}
    if settings is not None and any(settings.endpoint("llm")):
        extractors["llm"] = LLMExtractor(make_client(settings, "the llm extractor"), settings.llm_model)
    return extractors


def connect(
    settings: Settings | None = None,
    *,
    migrate: bool = True,
    check_index: bool = True,
    embedder: Embedder | None = None,
    **kwargs,
) -> GraphMem:
    """A ``GraphMem`` on the Neo4j that ``settings`` name (default: ``Settings()``).

    Args:
        migrate: apply pending schema migrations first.
        check_index: refuse (``IndexMismatch``) an index built with another embedding model,
            creating the vector indexes on a fresh database. Off for the commands that repair
            or inspect the index.
        embedder: use this instead of ``make_embedder(settings)``.
        kwargs: passed to ``GraphMem`` (policy, extractors, shared); by default the policy
            and extractors that ``settings`` name.

    With both checks off nothing touches the database until the first call.
    """
    from graphmem.api import GraphMem  # the facade imports this module for its default extractors

    settings = settings or Settings()
    conn = Neo4jConnection(settings)
    try:
        index = Neo4jIndex(conn, embedder or make_embedder(settings))
        if migrate:
            conn.migrate()
        if check_index:
            index.ensure()
        # Built only when not given (setdefault would build them anyway, and an LLM policy
        # without an endpoint refuses to be built).
        if "policy" not in kwargs:
            kwargs["policy"] = make_policy(settings)
        if "extractors" not in kwargs:
            kwargs["extractors"] = make_extractors(settings)
    except Exception:
        conn.close()
        raise
    database = Neo4jDatabase(conn, index, TX_LOG_ROTATION_KIB)  # the rotation graphmem's servers are set to
    return GraphMem(Neo4jStore(conn), index, settings=settings, database=database, **kwargs)
