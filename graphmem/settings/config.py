"""Settings from the environment and a ``.env`` file, built explicitly (``Settings()``); nothing
is read at import time.

Each setting has one environment name: ``NEO4J_*`` and ``OPENAI_*`` as those tools spell them,
``GRAPHMEM_<FIELD>`` for the rest (``GRAPHMEM_EMBEDDER``, ``GRAPHMEM_RRF_K``, ...). Keyword
arguments win over the environment, which wins over ``.env`` in the working directory. Empty
variables count as unset.

A ``.env`` chooses the database every write goes to and the bearer token a server accepts, so
it is read only if nobody but this user (or root) could have written it, by the rule of
``graphmem.settings.trust``; else building settings fails, one line naming the file and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from dotenv import dotenv_values  # pydantic-settings' own .env reader
from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, DotEnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from graphmem.domain.fusion import RERANK_DEPTH, RERANK_WEIGHT, RRF_K, WEIGHTS
from graphmem.errors import ConfigurationError, InvalidInput, error_line
from graphmem.settings.home import default_home
from graphmem.settings.trust import trusted

DEFAULT_BOLT_PORT = 7687
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def _trusted_env_file(path: Path) -> Path | None:
    """``path`` if it is a file nobody but this user (or root) could have written, None if
    there is none (then none is read, even one another user makes a moment later); raises
    ConfigurationError naming it otherwise."""
    if not path.is_file():
        return None
    # One that sets a password, token or key must be unreadable by others, as a token file is.
    secret = any(value and _SECRET.search(name) for name, value in dotenv_values(path).items())
    try:
        trusted(
            path, secret=secret, instead="remove the .env if you did not write it, or run graphmem from another folder"
        )
    except ConfigurationError as exc:
        raise ConfigurationError(f"{path.absolute()} refused: {exc}") from None
    return path


#: Setting names that hold a secret.
_SECRET = re.compile(r"PASSWORD|TOKEN|API_KEY|SECRET", re.IGNORECASE)


def _named(field: str) -> AliasChoices:
    """A setting whose environment name is its own name upper-cased, outside the GRAPHMEM_
    prefix (names match case-insensitively, so the two choices are one variable)."""
    return AliasChoices(field, field.upper())


def setting_name(field: str) -> str:
    """The one environment variable that sets ``field`` of Settings."""
    alias = Settings.model_fields[field].validation_alias
    last = alias.choices[-1] if isinstance(alias, AliasChoices) else None
    return last if isinstance(last, str) else f"GRAPHMEM_{field.upper()}"


def bad_setting(exc: ValidationError, options: Mapping[str, str] | None = None) -> InvalidInput:
    """``exc``, raised while building settings, as one line that names the bad setting as the
    user set it: by its option when ``options`` (field: option) has it, else its variable."""
    loc = exc.errors()[0]["loc"]
    field = str(loc[0]) if loc else ""
    if field not in Settings.model_fields:
        return InvalidInput(error_line(exc))
    return InvalidInput(error_line(exc).replace(field, (options or {}).get(field) or setting_name(field), 1))


class LocalServerSettings(BaseSettings):
    """The local server's settings, which `graphmem db` reads alone (an unrelated bad setting
    does not stop a server) and every other command reads as part of Settings."""

    model_config = SettingsConfigDict(
        env_prefix="GRAPHMEM_", env_file=".env", env_ignore_empty=True, extra="ignore", frozen=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        env_file = _trusted_env_file(Path(str(settings_cls.model_config["env_file"])))
        return init_settings, env_settings, DotEnvSettingsSource(settings_cls, env_file=env_file), file_secret_settings

    #: The local server's port (`graphmem db`), and so the default URI of every other command.
    neo4j_port: int = Field(
        DEFAULT_BOLT_PORT,
        ge=1,
        le=65535,
        description=("`graphmem db`'s port, and the port of the default NEO4J_URI of every other command"),
    )
    home: Path = Field(
        default_factory=default_home, description=("Neo4j jars, instances with their password files, model files")
    )
    neo4j_version: str | None = Field(
        None, description=("the Neo4j `graphmem db start` runs (unset: 2026.02.2 with a Java 21+, else 5.26.30)")
    )


class Settings(LocalServerSettings):
    """Everything configurable (environment names in the module docstring)."""

    neo4j_uri: str = Field(
        default_factory=lambda data: f"bolt://127.0.0.1:{data['neo4j_port']}",
        validation_alias=_named("neo4j_uri"),
        description="the Neo4j to use: bolt:// or neo4j://, each also +s or +ssc for TLS",
    )

    @field_validator("neo4j_uri")
    @classmethod
    def _bolt(cls, uri: str) -> str:
        # The driver also takes http:// (its query API, with an extra dependency) but graphmem
        # speaks Bolt only; say so instead of a missing-module error.
        if urlsplit(uri).scheme not in BOLT_SCHEMES:
            raise ValueError(
                f"{uri!r} is not a Bolt URI: use bolt://HOST:PORT (one server) "
                "or neo4j://, neo4j+s:// (a cluster or Aura)"
            )
        return uri

    neo4j_user: str = Field("neo4j", validation_alias=_named("neo4j_user"), description="the Neo4j user")
    neo4j_password: SecretStr = Field(
        SecretStr(""),
        validation_alias=_named("neo4j_password"),
        description=(
            "empty: the local server's password file (the `neo4j` user's: another NEO4J_USER needs its own "
            "password), else no auth"
        ),
    )
    neo4j_database: str = Field("neo4j", validation_alias=_named("neo4j_database"), description="the Neo4j database")
    neo4j_retry_seconds: float = Field(
        # At most two minutes: the driver's pause between attempts doubles, so a long budget
        # leaves a thread asleep long after the server is back.
        30.0,
        ge=0,
        le=120,
        allow_inf_nan=False,
        description="how long a transaction retries transient failures (a leader switch, a brief outage) "
        "before it fails",
    )

    embedder: Literal["minilm", "bge-small", "hashing", "openai"] = Field(
        "minilm",
        description=(
            "`minilm` (offline), `bge-small` (offline, bge-small-en-v1.5 int8 on onnxruntime: the `bge` extra; "
            "docs/models.md), `openai` (any OpenAI-compatible endpoint) or `hashing` (tests)"
        ),
    )
    openai_base_url: str | None = Field(
        None,
        validation_alias=_named("openai_base_url"),
        description=(
            "the endpoint of both the model and the `openai` embedder unless their own is set (unset: api.openai.com)"
        ),
    )
    openai_api_key: SecretStr = Field(
        SecretStr(""),
        validation_alias=_named("openai_api_key"),
        description="the API key of that endpoint (empty: none)",
    )
    embedding_model: str = Field("text-embedding-3-small", description="the `openai` embedder's model")
    embedding_dimensions: int | None = Field(
        None, description="the `openai` embedder's dimensions (unset: the model's own)"
    )
    llm_model: str = Field("gpt-4o-mini", description="the model of the `llm` extractor and policy")
    # The model and the embedder may live on different servers (a chat model on vLLM, embeddings
    # on Ollama); unset, each falls back to OPENAI_BASE_URL / OPENAI_API_KEY.
    llm_base_url: str | None = Field(
        None, description="the `llm` extractor's and policy's endpoint (unset: OPENAI_BASE_URL)"
    )
    llm_api_key: SecretStr = Field(SecretStr(""), description="the API key of that endpoint (empty: OPENAI_API_KEY)")
    embedding_base_url: str | None = Field(
        None, description="the `openai` embedder's endpoint (unset: OPENAI_BASE_URL)"
    )
    embedding_api_key: SecretStr = Field(
        SecretStr(""), description="the API key of that endpoint (empty: OPENAI_API_KEY)"
    )

    policy: Literal["rule", "llm"] = Field("rule", description="`rule` (no LLM) or `llm`: the policy asks the model")
    subject: str | None = Field(
        None, description="the subject (TYPE:ID, e.g. user:alice) of a CLI command given no --subject"
    )

    @field_validator("subject")
    @classmethod
    def _scope(cls, subject: str | None) -> str | None:
        # Named when read, not when a command first uses it; imported here, as `graphmem db`
        # never reads it and needs none of the domain models.
        from graphmem.domain.models import Scope

        if subject is not None:
            Scope.parse(subject)
        return subject

    rrf_k: int = Field(
        RRF_K, ge=1, description=("the reciprocal rank fusion constant; smaller trusts the top of each list more")
    )
    #: Weight of each ranked list in the fusion (semantic, lexical, entities, time, speaker), of
    #: a walk's paths and of the question's similarity (``graphmem.domain.fusion``; 1 when not named).
    #: GRAPHMEM_LIST_WEIGHTS as JSON, e.g. {"time": 3}.
    list_weights: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=lambda: dict(WEIGHTS),
        description=(
            "JSON weights of recall's ranked lists, of a walk's paths, of the question's similarity and of each other "
            "best hit told in the same conversation (a list not named weighs 1, conversation 0)"
        ),
    )

    @field_validator("list_weights")
    @classmethod
    def _known_lists(cls, weights: dict[str, float]) -> dict[str, float]:
        # A misspelt name would weigh nothing and leave its list at 1, silently.
        unknown = sorted(set(weights) - set(WEIGHTS))
        if unknown:
            raise ValueError(f"unknown name {unknown[0]!r}: use {'|'.join(WEIGHTS)}")
        return weights

    rerank: bool = Field(
        False,
        description=(
            "whether a recall that does not say is reranked by the cross-encoder (the `rerank` extra; "
            "docs/recall.md#reranking)"
        ),
    )
    rerank_depth: int = Field(
        RERANK_DEPTH, ge=1, le=100, description="how many of the best fused candidates the reranker reads"
    )
    rerank_weight: float = Field(
        RERANK_WEIGHT,
        ge=0,
        allow_inf_nan=False,
        description="how much the reranker's rank weighs against the fused rank's 1 (0: the fused order)",
    )

    trace_retention_days: float | None = Field(
        None, gt=0, description="`graphmem traces prune` removes assembly traces older than this (unset: keep all)"
    )

    # `graphmem serve` (graphmem.http): what one process accepts at once.
    http_max_body: int = Field(8 * 1024 * 1024, ge=1024, description="largest request body, bytes (else 413)")
    # Far fewer than a body may hold: a request's episodes are written on one worker, so one
    # key's long write would hold a place the others wait for.
    http_max_episodes: int = Field(1_000, ge=1, description="episodes one POST .../episodes may carry (else 413)")
    http_timeout: float = Field(
        60.0, gt=0, description="seconds a request may wait and run (else 503; a write past it becomes a job)"
    )
    # 8 and 4: on 2 cores, 16 clients of one key reach 0.98 of the same load in process (4 and 2:
    # 0.71), and another key's recalls stay fast under a flood of writes (docs/http.md#load).
    http_concurrency: int = Field(8, ge=1, description="requests worked on at once; the others wait in line")
    http_key_concurrency: int = Field(
        4,
        ge=1,
        description=(
            "requests of one key worked on at once (at most http_concurrency): its others wait, and a freed place "
            "goes to the key with the fewest running"
        ),
    )
    http_queue: int = Field(256, ge=0, description="requests that may wait in line (beyond it: 503 at once)")
    http_cors_origins: str = Field("", description="comma-separated origins allowed by CORS (empty: CORS off)")
    http_metrics: Literal["off", "loopback", "admin"] = Field(
        "loopback",
        description=(
            "who may read GET /metrics (Prometheus): off (404), loopback (requests from this machine only) or admin "
            "(an admin key)"
        ),
    )
    #: `graphmem mcp serve --transport http`: the bearer token (else --token-file, else generated).
    mcp_token: SecretStr = Field(
        SecretStr(""),
        description=("the bearer token of `mcp serve --transport http` (empty: --token-file, else one generated)"),
    )

    def endpoint(self, role: Literal["llm", "embedding"]) -> tuple[str | None, str]:
        """(base URL, API key) of the OpenAI-compatible endpoint for ``role``: its own
        settings, each falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``."""
        own_url, own_key = (
            (self.llm_base_url, self.llm_api_key)
            if role == "llm"
            else (self.embedding_base_url, self.embedding_api_key)
        )
        return own_url or self.openai_base_url, own_key.get_secret_value() or self.openai_api_key.get_secret_value()

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """``Settings(**overrides)`` with None overrides dropped (unset CLI options)."""
        return cls(**{k: v for k, v in overrides.items() if v is not None})
