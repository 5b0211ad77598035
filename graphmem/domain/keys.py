"""API keys: what a key looks like, how it is checked, and which subjects it holds.

A key is ``gm_<id>_<secret>``: ``id`` (12 hex digits) names it in listings, logs and the
``actor`` of the decisions it causes; ``secret`` is 32 random bytes (URL-safe base64). Only
``sha256(secret)`` is stored, so a copy of the database gives no usable key, and the check
compares digests in constant time. The id travels inside the key so the stored key is found by
id, never by searching for a digest.

A key holds subjects written ``TYPE:ID`` (every project of each); an admin key holds every
subject.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import NamedTuple

from graphmem.domain.models import ApiKey, Scope
from graphmem.errors import InvalidInput

PREFIX = "gm"


def subject_name(scope: Scope) -> str:
    """The ``TYPE:ID`` a key holds for a scope (its project does not count)."""
    return f"{scope.subject_type.value}:{scope.subject_id}"


def canonical(subject: str) -> str:
    """A subject as keys store it; ``InvalidInput`` when it is not ``TYPE:ID``."""
    try:
        return subject_name(Scope.parse(subject))
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


#: A key's name says whose it is in listings and logs: a label, not a document.
MAX_NAME_CHARS = 200


class IssuedKey(NamedTuple):
    """A new key: the record to store, and the one copy of its token (shown once, never stored)."""

    key: ApiKey
    token: str


def new_key(subjects: list[str], admin: bool = False, name: str | None = None) -> IssuedKey:
    """A new key holding ``subjects`` (all of them when ``admin``)."""
    held = tuple(dict.fromkeys(canonical(s) for s in subjects))
    if not held and not admin:
        raise InvalidInput("a key needs at least one --subject, or --admin")
    if name is not None and len(name) > MAX_NAME_CHARS:
        raise InvalidInput(f"a key's name is at most {MAX_NAME_CHARS} characters, not {len(name)}")
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    record = ApiKey(id=key_id, digest=digest(secret), subjects=held, admin=admin, name=name)
    return IssuedKey(record, f"{PREFIX}_{key_id}_{secret}")


class TokenParts(NamedTuple):
    """What a token ``gm_<id>_<secret>`` holds."""

    key_id: str
    secret: str


def split(token: str) -> TokenParts | None:
    """The id and secret of a token of the right form, else None."""
    prefix, _, rest = token.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != PREFIX or len(key_id) != 12 or not secret:
        return None
    return TokenParts(key_id, secret)


def matches(key: ApiKey | None, secret: str) -> bool:
    """The stored key is live and ``secret`` is its secret (constant-time comparison)."""
    # The digest is computed and compared even without a key, so an unknown id costs the same.
    ok = hmac.compare_digest(digest(secret), key.digest if key is not None else "0" * 64)
    return ok and key is not None and key.revoked_at is None


def holds(key: ApiKey, scope: Scope) -> bool:
    """The key may read and write ``scope``."""
    return key.admin or subject_name(scope) in key.subjects
