"""What the MCP server offers beside its tools: resources, a prompt and completion.

- Resources, JSON documents by URI (``resources/list`` names the subjects a caller may read;
  ``resources/templates/list`` the three templates):

  - ``graphmem://subjects/{subject}``: what the subject holds (counts, resident blocks);
  - ``graphmem://subjects/{subject}/entities/{name}``: an entity's bi-temporal timeline
    (``GraphMem.history``, ended and expired facts included);
  - ``graphmem://subjects/{subject}/units/{unit_id}``: one unit with its usage and provenance
    (``GraphMem.unit`` and ``GraphMem.explain``).

  A read is scoped as a tool call is (``McpConfig.scope_for``: the server's subjects, an API
  key's). A URI naming nothing, or a subject the caller may not read, is JSON-RPC error -32602
  with the URI in its data.
- The prompt ``memory_context``: the context ``GraphMem.assemble`` builds for a question, then
  the question, as one user message.
- Completion (``completion/complete``) of the ``subject`` argument of the prompt and the
  templates, and of the entity template's ``name``.

Logging (``logging/setLevel``) is in ``graphmem.mcp.session_log``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote

import anyio
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Completion,
    PromptReference,
    Resource,
    ResourceTemplateReference,
)
from pydantic import Field

from graphmem.domain.keys import holds, subject_name
from graphmem.domain.times import parse_optional_time
from graphmem.errors import REPORTED, InvalidInput, NotFound, error_line
from graphmem.faces import views
from graphmem.mcp.config import CALLER

if TYPE_CHECKING:  # pragma: no cover
    from graphmem.mcp.tools import MemoryTools

SUBJECT_URI = "graphmem://subjects/{subject}"
ENTITY_URI = "graphmem://subjects/{subject}/entities/{name}"
UNIT_URI = "graphmem://subjects/{subject}/units/{unit_id}"
JSON = "application/json"
PROMPT = "memory_context"
PROMPT_DESCRIPTION = (
    "What memory holds for a question, as one user message: the subject's resident blocks and the "
    "facts recalled for it (the assemble tool's context, within the policy's token budget), then the question."
)
#: At most this many completion values (the protocol's limit).
MAX_VALUES = 100


def uri(template: str, **values: str) -> str:
    """``template`` with ``values`` percent-encoded (a subject's colon kept, for reading)."""
    return template.format(**{k: quote(v, safe=":") for k, v in values.items()})


def refusal(exc: BaseException, where: str) -> MCPError:
    """A graphmem error as a JSON-RPC error: what a caller got wrong (an unknown id or name, a
    subject it may not read, a bad argument) is -32602 with ``where`` (the URI) in its data;
    anything else (Neo4j unreachable) -32603."""
    code = INVALID_PARAMS if isinstance(exc, NotFound | InvalidInput | ValueError) else INTERNAL_ERROR
    return MCPError(code, error_line(exc), {"uri": where})


def dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class Surface:
    """The resources, prompt and completion of one server, over its ``MemoryTools``."""

    def __init__(self, tools: MemoryTools):
        self.tools = tools

    @property
    def config(self):
        return self.tools.config

    def subjects(self) -> list[str]:
        """The subjects a caller may read, as TYPE:ID: the server's own and those it allows
        (with ``allow_any_subject``, every stored subject too), less those its API key lacks."""
        names = [self.config.subject, *self.config.allow_subjects]
        if self.config.allow_any_subject:
            project = self.config.project
            names += [subject_name(r["scope"]) for r in self.tools.mem.subjects() if r["scope"].project_id == project]
        key = CALLER.get()
        found = []
        for name in dict.fromkeys(names):
            try:
                scope = self.config.scope_for(name)
            except REPORTED:
                continue
            if key is None or holds(key, scope):
                found.append(subject_name(scope))
        return found

    # -- resources -------------------------------------------------------------------------
    def subject_resource(self, name: str) -> Resource:
        return Resource(
            uri=uri(SUBJECT_URI, subject=name),
            name=name,
            title=f"{name}'s memory",
            description=f"What {name} holds: counts, resident blocks, and the URI templates of its entities and units.",
            mime_type=JSON,
        )

    def read_subject(self, subject: str) -> str:
        scope = self.config.scope_for(subject)
        name = subject_name(scope)
        counts = next((r for r in self.tools.mem.subjects() if r["scope"] == scope), None)
        held = {k: counts[k] if counts else 0 for k in ("episodes", "units", "decisions")}
        return dumped(
            {
                **views.subject(scope, held),
                "blocks": [views.block(b) for b in self.tools.mem.list_blocks(scope)],
                "entity_uris": uri(SUBJECT_URI, subject=name) + "/entities/{name}",
                "unit_uris": uri(SUBJECT_URI, subject=name) + "/units/{unit_id}",
            }
        )

    def read_entity(self, subject: str, name: str) -> str:
        scope = self.config.scope_for(subject)
        entries = self.tools.mem.history(scope, entity=name, include_expired=True)
        if not entries:
            raise NotFound(f"no entity {name} in scope {scope}")
        return dumped({**views.scope(scope), "entity": name, "timeline": [views.history_entry(e) for e in entries]})

    def read_unit(self, subject: str, unit_id: str) -> str:
        scope = self.config.scope_for(subject)
        found = self.tools.mem.unit(unit_id, scope)
        why = views.explanation(self.tools.mem.explain(unit_id, scope))
        return dumped(
            {
                **why,
                "unit": views.unit(found["unit"]),
                "usage": views.usage_record(found["usage"]),
                "entity_uris": [uri(ENTITY_URI, subject=subject_name(scope), name=e["name"]) for e in why["entities"]],
            }
        )

    # -- the prompt ------------------------------------------------------------------------
    def memory_context(self, question: str, subject: str | None = None, as_of: str | None = None) -> str:
        """The prompt's one message: the assembled context, then the question."""
        scope = self.config.scope_for(subject)
        built = self.tools.mem.assemble(question, subject=scope, as_of=parse_optional_time(as_of, "as_of"))
        context = built.text.strip() or "(nothing relevant is stored)"
        return f"What memory holds for this question (trace {built.trace.id}):\n\n{context}\n\nQuestion: {question}"

    # -- completion ------------------------------------------------------------------------
    def complete(self, ref: Any, argument: Any, context: Any) -> Completion:
        """Values for a prompt or template argument starting with what was typed (case
        ignored); none for anything else (another server's names complete to nothing)."""
        ours = (isinstance(ref, PromptReference) and ref.name == PROMPT) or (
            isinstance(ref, ResourceTemplateReference) and ref.uri in (SUBJECT_URI, ENTITY_URI, UNIT_URI)
        )
        typed = (argument.value or "").casefold()
        values: list[str] = []
        if ours and argument.name == "subject":
            values = [s for s in self.subjects() if s.casefold().startswith(typed)]
        return Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)


def install(server: Any, tools: MemoryTools) -> Surface:
    """Register the resources, the prompt and completion on ``server`` (an ``MCPServer``)."""
    surface = Surface(tools)

    def answering(where: str, read: Any, *args: str) -> str:
        try:
            return read(*args)
        except REPORTED as exc:
            raise refusal(exc, where) from None

    # The SDK binds a template's variables to the parameters of the same names.
    def subject_document(subject: str) -> str:
        return answering(uri(SUBJECT_URI, subject=subject), surface.read_subject, subject)

    def entity_timeline(subject: str, name: str) -> str:
        return answering(uri(ENTITY_URI, subject=subject, name=name), surface.read_entity, subject, name)

    def unit_document(subject: str, unit_id: str) -> str:
        return answering(uri(UNIT_URI, subject=subject, unit_id=unit_id), surface.read_unit, subject, unit_id)

    server.resource(
        SUBJECT_URI,
        name="subject",
        title="A subject's memory",
        description="What a subject holds: counts of episodes, units and decisions, its resident blocks, "
        "and the URI templates of its entities and units.",
        mime_type=JSON,
    )(subject_document)
    server.resource(
        ENTITY_URI,
        name="entity",
        title="An entity's timeline",
        description="Every fact about an entity on both time axes (valid_at/invalid_at, created_at/expired_at), "
        "ended and expired ones included, with the decisions behind each change.",
        mime_type=JSON,
    )(entity_timeline)
    server.resource(
        UNIT_URI,
        name="unit",
        title="A memory unit",
        description="One unit (fact) with its usage and provenance: its episode, the decisions about it "
        "and the entities it is about.",
        mime_type=JSON,
    )(unit_document)

    def memory_context(
        question: Annotated[str, Field(description="The question the context is for.")],
        subject: Annotated[str | None, Field(description="TYPE:ID [default: the server's subject].")] = None,
        as_of: Annotated[str | None, Field(description="World time, ISO 8601 [default: now].")] = None,
    ) -> str:
        try:
            return surface.memory_context(question, subject, as_of)
        except REPORTED as exc:
            code = INVALID_PARAMS if isinstance(exc, ValueError) else INTERNAL_ERROR
            raise MCPError(code, error_line(exc)) from None

    server.prompt(name=PROMPT, title="Context from memory", description=PROMPT_DESCRIPTION)(memory_context)

    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        try:
            return await anyio.to_thread.run_sync(surface.complete, ref, argument, context)
        except REPORTED as exc:
            raise MCPError(INTERNAL_ERROR, error_line(exc)) from None

    server.completion()(complete)
    return surface
