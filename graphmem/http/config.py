"""What one HTTP app accepts: its limits, keys and origins (``HttpConfig``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphmem.settings.config import Settings


def _default(name: str) -> Any:
    return Settings.model_fields[f"http_{name}"].default


class HttpConfig(BaseModel):
    """What one app accepts (defaults: ``Settings``' ``http_*`` fields)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    auth: bool = Field(True, description="API keys required (False: --insecure-no-auth).")
    max_body: int = Field(_default("max_body"), ge=1024)
    max_episodes: int = Field(_default("max_episodes"), ge=1)
    timeout: float = Field(_default("timeout"), gt=0)
    concurrency: int = Field(_default("concurrency"), ge=1)
    key_concurrency: int = Field(_default("key_concurrency"), ge=1)
    queue: int = Field(_default("queue"), ge=0)
    cors_origins: tuple[str, ...] = ()
    loopback: bool = Field(
        False,
        description=(
            "Bound to a loopback address: only requests whose Host names this machine are answered "
            "(a page whose name was made to resolve here, DNS rebinding, is refused)."
        ),
    )

    @classmethod
    def from_settings(cls, settings: Settings, auth: bool = True, loopback: bool = False) -> HttpConfig:
        origins = tuple(o.strip() for o in settings.http_cors_origins.split(",") if o.strip())
        return cls(
            auth=auth,
            max_body=settings.http_max_body,
            max_episodes=settings.http_max_episodes,
            timeout=settings.http_timeout,
            concurrency=settings.http_concurrency,
            key_concurrency=settings.http_key_concurrency,
            queue=settings.http_queue,
            cors_origins=origins,
            loopback=loopback,
        )
