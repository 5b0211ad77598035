"""Settings, built explicitly (``Settings.from_env()``); nothing is read at import time."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Mapping

from pydantic import BaseModel, Field, SecretStr

DEFAULT_BOLT_PORT = 7687


def default_home() -> Path:
    """Where graphmem keeps its local Neo4j, model files and caches."""
    return Path(os.environ.get("GRAPHMEM_HOME", Path.home() / ".cache" / "graphmem"))


class Settings(BaseModel):
    """Everything configurable. Environment names are given in each field's description."""

    model_config = {"frozen": True}

    neo4j_uri: str = Field(f"bolt://127.0.0.1:{DEFAULT_BOLT_PORT}", description="NEO4J_URI")
    neo4j_user: str = Field("neo4j", description="NEO4J_USER")
    neo4j_password: SecretStr = Field(SecretStr(""), description="NEO4J_PASSWORD (empty: no auth)")
    neo4j_database: str = Field("neo4j", description="NEO4J_DATABASE")
    home: Path = Field(default_factory=default_home, description="GRAPHMEM_HOME")

    embedder: Literal["minilm", "hashing", "openai"] = Field("minilm", description="GRAPHMEM_EMBEDDER")
    openai_base_url: str | None = Field(None, description="OPENAI_BASE_URL")
    openai_api_key: SecretStr = Field(SecretStr(""), description="OPENAI_API_KEY")
    embedding_model: str = Field("text-embedding-3-small", description="GRAPHMEM_EMBEDDING_MODEL")
    embedding_dimensions: int | None = Field(None, description="GRAPHMEM_EMBEDDING_DIMENSIONS")
    llm_model: str = Field("gpt-4o-mini", description="GRAPHMEM_LLM_MODEL")

    policy: Literal["rule", "llm"] = Field("rule", description="GRAPHMEM_POLICY")
    rrf_k: int = Field(60, ge=1, description="GRAPHMEM_RRF_K (reciprocal rank fusion constant)")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> "Settings":
        """Build settings from environment variables; explicit overrides win (None is ignored)."""
        env = os.environ if env is None else env
        names = {
            "neo4j_uri": "NEO4J_URI",
            "neo4j_user": "NEO4J_USER",
            "neo4j_password": "NEO4J_PASSWORD",
            "neo4j_database": "NEO4J_DATABASE",
            "home": "GRAPHMEM_HOME",
            "embedder": "GRAPHMEM_EMBEDDER",
            "openai_base_url": "OPENAI_BASE_URL",
            "openai_api_key": "OPENAI_API_KEY",
            "embedding_model": "GRAPHMEM_EMBEDDING_MODEL",
            "embedding_dimensions": "GRAPHMEM_EMBEDDING_DIMENSIONS",
            "llm_model": "GRAPHMEM_LLM_MODEL",
            "policy": "GRAPHMEM_POLICY",
            "rrf_k": "GRAPHMEM_RRF_K",
        }
        values: dict[str, object] = {k: env[v] for k, v in names.items() if env.get(v)}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
