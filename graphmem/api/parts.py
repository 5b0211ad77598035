"""The parts a ``GraphMem`` is composed of, and what its groups of methods share."""

from __future__ import annotations

from typing import Any

from graphmem.adapters.tokens import TiktokenCounter
from graphmem.api.arguments import SubjectLike, as_scope
from graphmem.domain.models import Scope
from graphmem.errors import ConfigurationError, InvalidInput
from graphmem.extract.llm import LLMExtractor
from graphmem.extract.registry import make_extractors
from graphmem.llm import client as openai_api
from graphmem.pipelines.assemble import Assembler, Blocks
from graphmem.pipelines.recall import Recaller
from graphmem.pipelines.rerank import Rerank
from graphmem.pipelines.usage import UsageLog
from graphmem.pipelines.write import WritePipeline
from graphmem.policy import BasePolicy, PolicyConfig
from graphmem.policy.rule import RulePolicy
from graphmem.ports import Database, MemoryIndex, MemoryStore, Reranker
from graphmem.settings.config import Settings


class Parts:
    """The store, its index and the pipelines over them: the base of every group of
    ``GraphMem``'s methods (writing, reading, operating)."""

    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        policy: BasePolicy | None = None,
        settings: Settings | None = None,
        extractors: dict[str, Any] | None = None,
        shared: Scope | None = None,
        database: Database | None = None,
        reranker: Reranker | None = None,
    ):
        """Compose the pipelines over a store and its index. ``GraphMem.connect`` builds them
        on Neo4j from settings; tests pass ``InMemoryStore``/``InMemoryIndex``. ``database``
        (the operator's view of the backend: migrations, health) is None in memory;
        ``reranker`` (recall's second stage) is None unless given: then no recall is reranked."""
        self.settings = settings or Settings()
        self.store = store
        self.index = index
        self.database = database
        self.policy = policy or self.rule_policy()
        self.counter = TiktokenCounter()
        self.extractors = extractors or make_extractors()
        self.writer = WritePipeline(store, index, self.policy, self.extractors)
        rerank = Rerank(self.settings.rerank, self.settings.rerank_depth, self.settings.rerank_weight)
        self.recaller = Recaller(
            index, rrf_k=self.settings.rrf_k, weights=self.settings.list_weights, reranker=reranker, rerank=rerank
        )
        self.usage = UsageLog(store)
        self.assembler = Assembler(store, self.recaller, self.policy, self.counter, self.usage)
        self.blocks = Blocks(store, self.counter)
        self.shared = shared or Scope.parse("shared:global")

    @staticmethod
    def rule_policy() -> BasePolicy:
        """The policy a ``GraphMem`` decides with unless given another: rules, no LLM (what
        ``doctor`` opens with, so that an LLM policy's missing endpoint is a failed check)."""
        return RulePolicy(PolicyConfig())

    def scopes(self, subject: SubjectLike, project: str | None, include_shared: bool) -> list[Scope]:
        """The subject's scope, and the shared one after it with ``include_shared``."""
        scope = as_scope(subject, project)
        return [scope, self.shared] if include_shared and scope != self.shared else [scope]

    def _ready(self, extractor: str) -> None:
        """Refuse an extractor that is unknown or not configured (InvalidInput), or whose
        endpoint does not answer (BackendError), before anything is written."""
        chosen = self.extractors.get(extractor)
        if chosen is None and extractor == "llm":
            raise InvalidInput(openai_api.missing_endpoint("the llm extractor", "llm"))
        if chosen is None:
            # llm too: it is one once an endpoint is configured (the refusal above says how)
            known = [*self.extractors, *(["llm"] if "llm" not in self.extractors else [])]
            raise InvalidInput(f"unknown extractor {extractor!r}: use {'|'.join(known)}")
        if isinstance(chosen, LLMExtractor):
            chosen.ready()

    def _database(self) -> Database:
        if self.database is None:
            raise ConfigurationError("this GraphMem has no database (in-memory store): nothing to migrate or inspect")
        return self.database
