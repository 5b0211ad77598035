"""Who may reach a subject and what was taken from it: API keys, erasure records, and the jobs
of writes that outlived their HTTP request."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from graphmem.domain.models.base import Model, UTCDatetime, utcnow
from graphmem.domain.models.scope import Scope


class ApiKey(Model):
    """An API key as stored: only the sha256 of its secret (``graphmem.domain.keys``), the subjects
    (``TYPE:ID``, every project of each) it may read and write, and whether it holds them all."""

    id: str
    digest: str
    subjects: tuple[str, ...] = ()
    admin: bool = False
    name: str | None = None
    created_at: UTCDatetime = Field(default_factory=utcnow)
    revoked_at: UTCDatetime | None = None


#: What an erasure deletes, kind by kind: the counts its record keeps.
ERASED_KINDS = (
    "units",
    "episodes",
    "entities",
    "decisions",
    "traces",
    "blocks",
    "reviews",
    "locks",
    "commits",
    "usage",
    "deletions",
    "entries",
    "jobs",
)


class Erasure(Model):
    """The record of one erasure: which kind of subject, keyed only by HMACs under the store's
    secret (``erasure_keys``), who asked, and how many records of each kind it deleted."""

    id: str
    subject_type: str
    subject_hash: str
    project_hash: str
    status: Literal["running", "done"]
    actor: str | None = None
    #: How the subject is keyed ("hmac-sha256"); None on records from before keys.
    key: str | None = None
    started_at: UTCDatetime | None = None
    updated_at: UTCDatetime | None = None
    units: int = 0
    episodes: int = 0
    entities: int = 0
    decisions: int = 0
    traces: int = 0
    blocks: int = 0
    reviews: int = 0
    locks: int = 0
    commits: int = 0
    usage: int = 0
    deletions: int = 0
    entries: int = 0
    jobs: int = 0

    @property
    def counts(self) -> dict[str, int]:
        """Records deleted so far, by kind (``ERASED_KINDS``)."""
        return {kind: getattr(self, kind) for kind in ERASED_KINDS}


class Job(Model):
    """A write still running when its HTTP request's time ran out (answered 202): stored, so any
    server process on the database answers its poll. ``result`` is the answer the request would
    have had; a failed job keeps the error's code and line instead. It holds the subject's facts,
    so the subject's erasure deletes it."""

    id: str
    owner: str
    scope: Scope
    status: Literal["running", "done", "failed"] = "running"
    result: dict[str, Any] | None = None
    error_code: str | None = None
    error_message: str | None = None
    created_at: UTCDatetime = Field(default_factory=utcnow)
    finished_at: UTCDatetime | None = None
