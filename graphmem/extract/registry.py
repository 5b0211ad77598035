"""The extractors by name, as a ``GraphMem`` offers them: its default set, and the LLM one when
the settings name an endpoint."""

from __future__ import annotations

from graphmem.extract import FactsExtractor, NoneExtractor
from graphmem.extract.llm import LLMExtractor
from graphmem.extract.rule import RuleExtractor
from graphmem.llm.client import make_client
from graphmem.ports import Extractor
from graphmem.settings.config import Settings


def make_extractors(settings: Settings | None = None) -> dict[str, Extractor]:
    """The extractors by name: ``facts``, ``rule`` and ``none`` always; ``llm`` when
    ``settings`` name an OpenAI-compatible endpoint or key for the model."""
    extractors: dict[str, Extractor] = {"facts": FactsExtractor(), "rule": RuleExtractor(), "none": NoneExtractor()}
    if settings is not None and any(settings.endpoint("llm")):
        extractors["llm"] = LLMExtractor(make_client(settings, "the llm extractor"), settings.llm_model)
    return extractors
