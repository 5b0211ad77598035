"""What one MCP server serves (``McpConfig``) and who a call comes from (``CALLER``): the
subjects a call may name, bounded by its API key over HTTP."""

from __future__ import annotations

from contextvars import ContextVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from graphmem.api import as_scope
from graphmem.domain.keys import holds
from graphmem.domain.models import ApiKey, Scope
from graphmem.errors import ScopeViolation

#: The API key of the HTTP request a tool call came with (None: the server's token, or stdio).
#: The SDK hands each call the context of the request that sent it.
CALLER: ContextVar[ApiKey | None] = ContextVar("graphmem_mcp_caller", default=None)
#: The actor of writes made without an API key.
ACTOR = "mcp"


class McpConfig(BaseModel):
    """What one server serves: its default subject and which other subjects a call may name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str = Field(description="The default subject (TYPE:ID) of every call.")
    project: str | None = Field(None, description="Optional project id of every subject.")
    allow_subjects: tuple[str, ...] = Field((), description="Other subjects a call may name.")
    allow_any_subject: bool = Field(False, description="A call may name any subject.")
    name: str = "graphmem"

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str) -> str:
        Scope.parse(value)  # ValueError: "subject 'x' is not TYPE:ID ..."
        return value

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None, info: ValidationInfo) -> str | None:
        if "subject" in info.data:  # else the subject's own error is the one reported
            Scope.parse(info.data["subject"], value)  # ValueError: "project 'null' reads as no project ..."
        return value

    @field_validator("allow_subjects")
    @classmethod
    def _allowed(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            Scope.parse(value)
        return values

    def scope_for(self, subject: str | None) -> Scope:
        """The scope a call reaches: the configured one, or ``subject`` when allowed; with an
        API key (``CALLER``), only a subject the key holds."""
        if subject is None or not subject.strip():
            scope = as_scope(self.subject, self.project)
        else:
            scope = as_scope(subject.strip(), self.project)
            allowed = [as_scope(s, self.project) for s in (self.subject, *self.allow_subjects)]
            if not self.allow_any_subject and scope not in allowed:
                raise ScopeViolation(f"subject {subject.strip()} is not allowed by this server")
        key = CALLER.get()
        if key is not None and not holds(key, scope):
            raise ScopeViolation(f"key {key.id} does not hold subject {scope}")
        return scope
