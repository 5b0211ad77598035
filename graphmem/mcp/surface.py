"""What the MCP server offers beside its tools: resources, a prompt and completion.

- Resources, JSON documents by URI; ``resources/list`` pages through the subjects a caller may
  read, each followed by its entities:

  - ``graphmem://subjects/{subject}``: counts, resident blocks, the newest units;
  - ``graphmem://subjects/{subject}/entities/{name}``: an entity, its current facts and its
    bi-temporal timeline (``GraphMem.entity``);
  - ``graphmem://subjects/{subject}/units/{unit_id}``: one unit with its usage and provenance.

  Every read is scoped as a tool call is (``McpConfig.scope_for``: the server's subjects, an
  API key's). A URI naming nothing, or a subject the caller may not read, is error -32602.
- The prompt ``memory_context``: the context ``GraphMem.assemble`` builds for a question, then
  the question, as one user message.
- Completion of the ``subject`` argument of the prompt and the templates, and of an entity's
  ``name`` (``GraphMem.entities`` by prefix).

Logging (``logging/setLevel``) is in ``graphmem.mcp.session_log``.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote

import anyio
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Completion,
    ListResourcesResult,
    PaginatedRequestParams,
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
    from graphmem.api import EntitySummary
    from graphmem.domain.models import Scope

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
#: Entities on one page of ``resources/list``.
PAGE = 100
#: The newest units a subject's document links to.
RECENT = 20


def uri(template: str, **values: str) -> str:
    """``template`` with ``values`` percent-encoded (a subject's colon kept, for reading)."""
    return template.format(**{k: quote(v, safe=":") for k, v in values.items()})


def refusal(exc: BaseException, where: str | None = None) -> MCPError:
    """A graphmem error as a JSON-RPC error: what a caller got wrong (an unknown id or name, a
    subject it may not read, a bad argument or cursor) is -32602 with ``where`` (the URI) in its
    data; anything else (Neo4j unreachable) -32603."""
    code = INVALID_PARAMS if isinstance(exc, NotFound | InvalidInput | ValueError) else INTERNAL_ERROR
    return MCPError(code, error_line(exc), {"uri": where} if where is not None else None)


def dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def page_cursor(subject: str, entities: str | None) -> str:
    """``resources/list``'s cursor: the subject it is in, and where in its entities (None: the
    subject's own resource comes first)."""
    return base64.urlsafe_b64encode(json.dumps([subject, entities]).encode()).decode()


def read_page_cursor(cursor: str) -> tuple[str, str | None]:
    try:
        subject, entities = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if not isinstance(subject, str) or not isinstance(entities, str | None):
            raise TypeError(cursor)
    except (ValueError, TypeError) as exc:
        raise InvalidInput("cursor: not one resources/list gave") from exc
    return subject, entities


class Surface:
    """The resources, prompt and completion of one server, over its ``MemoryTools``."""

    def __init__(self, tools: MemoryTools):
        self.tools = tools

    @property
    def config(self):
        return self.tools.config

    def named(self, subject: str) -> Scope:
        """The scope a URI names: unlike a tool's, its subject is never the default."""
        if not subject.strip():
            raise InvalidInput("a resource URI names its subject: graphmem://subjects/TYPE:ID")
        return self.config.scope_for(subject)

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
    def resource_page(self, cursor: str | None) -> tuple[list[Resource], str | None]:
        """One page of ``resources/list``: a subject the caller may read, then its entities by
        name, a page at a time; the cursor of the next (None after the last subject)."""
        subjects = self.subjects()
        if cursor is None:
            if not subjects:
                return [], None
            name, after = subjects[0], None
        else:
            name, after = read_page_cursor(cursor)
            if name not in subjects:  # a cursor is no key: the caller's rights are checked again
                raise InvalidInput(f"cursor: subject {name} is not one this caller may list")
        scope = self.config.scope_for(name)
        page = self.tools.mem.entities(scope, cursor=after, limit=PAGE)
        found = [self.subject_resource(name)] if after is None else []
        found += [self.entity_resource(name, e) for e in page.entities]
        if page.next_cursor is not None:
            return found, page_cursor(name, page.next_cursor)
        rest = subjects[subjects.index(name) + 1 :]
        return found, page_cursor(rest[0], None) if rest else None

    def subject_resource(self, name: str) -> Resource:
        return Resource(
            uri=uri(SUBJECT_URI, subject=name),
            name=name,
            title=f"{name}'s memory",
            description=f"What {name} holds: counts, resident blocks, its newest units.",
            mime_type=JSON,
        )

    def entity_resource(self, subject: str, entity: EntitySummary) -> Resource:
        aliases = f" (also {', '.join(entity.aliases)})" if entity.aliases else ""
        return Resource(
            uri=uri(ENTITY_URI, subject=subject, name=entity.name),
            name=entity.name,
            title=f"{entity.name} ({subject})",
            description=f"{entity.name}{aliases}: {entity.facts} current facts, with the timeline of every fact.",
            mime_type=JSON,
        )

    def read_subject(self, subject: str) -> str:
        scope = self.named(subject)
        name = subject_name(scope)
        counts = next((r for r in self.tools.mem.subjects() if r["scope"] == scope), None)
        held = {k: counts[k] if counts else 0 for k in ("episodes", "units", "decisions")}
        recent = self.tools.mem.units(scope, limit=RECENT).units
        return dumped(
            {
                **views.subject(scope, held),
                "blocks": [views.block(b) for b in self.tools.mem.list_blocks(scope)],
                "recent_units": [
                    {"uri": uri(UNIT_URI, subject=name, unit_id=u.id), "content": u.content} for u in recent
                ],
                "entity_uris": uri(SUBJECT_URI, subject=name) + "/entities/{name}",
                "unit_uris": uri(SUBJECT_URI, subject=name) + "/units/{unit_id}",
            }
        )

    def read_entity(self, subject: str, name: str) -> str:
        """The entity as the ``entity_show`` tool shows it, with the URIs of its facts."""
        scope = self.named(subject)
        found = self.tools.mem.entity(name, scope)
        return dumped(
            {
                **views.scope(scope),
                **views.entity_view(found),
                "fact_uris": [uri(UNIT_URI, subject=subject_name(scope), unit_id=u.id) for u in found["facts"]],
            }
        )

    def read_unit(self, subject: str, unit_id: str) -> str:
        scope = self.named(subject)
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
        typed = argument.value or ""
        if ours and argument.name == "subject":
            values = [s for s in self.subjects() if s.casefold().startswith(typed.casefold())]
            return Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)
        if ours and argument.name == "name" and ref.uri == ENTITY_URI:
            given = (context.arguments or {}).get("subject") if context is not None else None
            return self.entity_names(given, typed)
        return Completion(values=[])

    def entity_names(self, subject: str | None, typed: str) -> Completion:
        """The names of ``subject``'s entities starting with ``typed`` (normalised: case and
        surrounding punctuation ignored); none for a subject the caller may not read."""
        try:
            scope = self.config.scope_for(subject)
            page = self.tools.mem.entities(scope, prefix=typed, limit=MAX_VALUES)
        except InvalidInput:  # a subject it may not name, or an over-long prefix
            return Completion(values=[])
        return Completion(values=[e.name for e in page.entities], has_more=page.next_cursor is not None)


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
        # A name is no file path (reads are bounded by subject, not by path), so "AC/DC" or
        # "C:\\x" must reach their entity; NUL is still refused.
        security=ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False),
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

    async def list_resources(ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        cursor = params.cursor if params is not None else None
        try:
            found, after = await anyio.to_thread.run_sync(surface.resource_page, cursor)
        except REPORTED as exc:
            raise refusal(exc) from None
        return ListResourcesResult(resources=found, next_cursor=after)

    # Paged: the SDK's own handler lists the resources registered on it, in one page.
    server._lowlevel_server.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
    return surface
