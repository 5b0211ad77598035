"""Who owns a record (``Scope``, of a ``SubjectType``) and the kinds of memory it holds."""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from functools import lru_cache

from pydantic import ValidationError

from graphmem.domain.models.base import Model
from graphmem.domain.models.text import Name, refuse_invisible, refuse_mixed_scripts
from graphmem.errors import error_line, quoted


class MemoryKind(str, Enum):
    semantic = "semantic"
    episodic = "episodic"
    procedural = "procedural"


class SubjectType(str, Enum):
    user = "user"
    agent = "agent"
    shared = "shared"
    session = "session"


#: Project ids that read as no project (how JSON, Python, Go and JavaScript print a missing
#: value, and nothing at all): one would be a project that every message shows as none.
NO_PROJECT = frozenset({"", "null", "none", "nil", "undefined"})


def check_new_project(project: str | None) -> None:
    """ValueError when ``project``, given as a new project id, reads as no project."""
    if project is not None and project.strip().casefold() in NO_PROJECT:
        raise ValueError(f"project {quoted(project)} reads as no project: leave the project out for none")


@lru_cache(maxsize=1 << 12)  # read for every row a write sends
def _scope_key(subject_type: str, subject_id: str, project_id: str | None) -> str:
    return json.dumps([subject_type, subject_id, project_id])


@lru_cache(maxsize=1 << 12)  # read for every entity and mention a write sends
def _scope_token(key: str) -> str:
    return "s" + hashlib.sha256(key.encode()).hexdigest()[:24]


class Scope(Model):
    """Who owns a record: every read and write is confined to exactly one scope.

    Ids are normalised (``normal_name``): ``user: Jose\u0301`` and ``user:José`` are one scope,
    whichever face (CLI, API, MCP) names it."""

    subject_type: SubjectType
    subject_id: Name
    project_id: Name | None = None

    @property
    def key(self) -> str:
        """Unambiguous single-string key, stored on every node and indexed."""
        return _scope_key(self.subject_type.value, self.subject_id, self.project_id)

    @property
    def token(self) -> str:
        """A single alphanumeric Lucene token naming the scope, so fulltext search can filter
        by scope inside the index instead of after it."""
        return _scope_token(self.key)

    @classmethod
    def parse(cls, subject: str, project: str | None = None, stored: bool = False) -> Scope:
        """Parse the CLI form ``TYPE:ID`` (e.g. ``user:alice``). A new id (not ``stored``: an
        export names what was stored then) holds nothing that shows as nothing and mixes no
        look-alike scripts, so two subjects cannot look alike; a new project is none of
        ``NO_PROJECT``."""
        if not stored:
            check_new_project(project)
        kind, sep, ident = subject.partition(":")
        kind = kind.strip()
        if not sep or not ident.strip():
            raise ValueError(f"subject {quoted(subject)} is not TYPE:ID (e.g. user:alice)")
        if kind not in SubjectType.__members__:
            allowed = "|".join(SubjectType.__members__)
            raise ValueError(f"unknown subject type {quoted(kind)}: use {allowed}")
        try:
            scope = cls(subject_type=SubjectType(kind), subject_id=ident, project_id=project)
        except ValidationError as exc:
            raise ValueError(f"subject {quoted(subject)}: {error_line(exc)}") from None
        checked = () if stored else (("subject", scope.subject_id), ("project", scope.project_id))
        for what, value in checked:
            try:
                refuse_invisible(value or "", "a name")
                refuse_mixed_scripts(value or "", "a name")
            except ValueError as exc:
                raise ValueError(f"{what} {quoted(value or '')} {exc}") from None
        return scope

    def __str__(self) -> str:
        text = f"{self.subject_type.value}:{self.subject_id}"
        return f"{text} (project {self.project_id})" if self.project_id else text
