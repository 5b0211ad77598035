"""Digests with a meaning: a content's hash, an entity's id and the keys an erasure record holds."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from graphmem.domain.tokenise import normalise

if TYPE_CHECKING:
    from graphmem.domain.models import Scope


def content_hash(content: str) -> str:
    """The SHA-256 of a content's ``normalise``d text: what "the same content" means."""
    return hashlib.sha256(normalise(content).encode()).hexdigest()


def erasure_key(secret: bytes, text: str) -> str:
    """How an erasure record names what it erased (``user:alice``, or a project id): an
    HMAC-SHA256, under the database's own secret, of the text's SHA-256. A plain hash of a
    subject is found by hashing guesses; this key is not, without the secret."""
    return keyed_digest(secret, hashlib.sha256(text.encode()).hexdigest())


def keyed_digest(secret: bytes, digest: str) -> str:
    """The erasure key of a text from its SHA-256 hex digest (the plain hash older erasure
    records held)."""
    return hmac.new(secret, digest.encode(), hashlib.sha256).hexdigest()


class ErasureKeys(NamedTuple):
    """The keys an erasure record names its subject by."""

    subject: str
    #: "" for an erasure of every project of the subject.
    project: str


def erasure_keys(secret: bytes, subject_type: str, subject_id: str, project_id: str | None) -> ErasureKeys:
    """The subject's and the project's key of an erasure record (``erasure_key``)."""
    project = erasure_key(secret, project_id) if project_id is not None else ""
    return ErasureKeys(erasure_key(secret, f"{subject_type}:{subject_id}"), project)


def entity_id(scope: Scope, name: str) -> str:
    """Entities are resolved within a scope by normalised name: the id is derived from both,
    so concurrent writers MERGE onto the same node."""
    return _norm_id(scope.key, normalise(name))


def entity_ids(scope: Scope, norms: Iterable[str]) -> list[str]:
    """``entity_id`` of names already normalised (``normalise``), the scope's key read once: a
    write asks for thousands of word runs."""
    key = scope.key
    return [_norm_id(key, norm) for norm in norms]


def _norm_id(key: str, norm: str) -> str:
    return hashlib.sha256(f"{key}\x1f{norm}".encode()).hexdigest()[:32]
