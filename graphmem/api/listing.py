"""``GraphMem``'s listings: a subject's units and entities page by page, and one entity with its
facts and timeline.

A cursor is opaque to callers: it holds the point (T, S) the first page was read at, the key of
the last row shown and a digest of the filters. So every page reads the memory as it was at S
(what is written later never shows), and the listing goes on from the row where it stopped:
paged to its end, it shows every record that existed when it began exactly once.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import Strict

from graphmem.api.arguments import SubjectLike, Time, as_scope, point_in_time
from graphmem.api.reading import Reading
from graphmem.domain.limits import MAX_K, PageSize
from graphmem.domain.models import (
    MAX_FILTER_CHARS,
    AsOf,
    EntityPage,
    MemoryKind,
    Scope,
    UnitKey,
    UnitPage,
    UnitQuery,
    UnitStatus,
    normalise,
)
from graphmem.errors import InvalidInput, NotFound

#: Longer than any cursor a listing gives (its key holds a name of at most MAX_FILTER_CHARS).
MAX_CURSOR_CHARS = 2000
#: A unit's standing to list (None: every unit known at S, whatever its standing).
Status = Annotated[UnitStatus, Strict(False)] | None
#: A kind to list, by name too ("semantic").
Kind = Annotated[MemoryKind, Strict(False)] | None


class Listing(Reading):
    """What a subject holds, page by page: units, entities, and one entity (with its timeline,
    from the reads)."""

    def units(
        self,
        subject: SubjectLike,
        project: str | None = None,
        kind: Kind = None,
        entity: str | None = None,
        contains: str | None = None,
        status: Status = UnitStatus.current,
        as_of: Time = None,
        known_at: Time = None,
        cursor: str | None = None,
        limit: PageSize = 50,
    ) -> UnitPage:
        """A page of the subject's units, newest first: of one kind, about or naming ``entity``,
        holding ``contains`` (case-insensitive), with this standing at (as_of, known_at) (default
        now; ``status`` None: any). ``next_cursor`` asks for the next page with the same
        filters; it keeps the first page's point in time."""
        scope = as_scope(subject, project)
        query = UnitQuery(kind=kind, entity=entity, contains=contains, status=status)
        digest = _digest("units", scope, query.model_dump(mode="json"))
        at, after = point_in_time(as_of, known_at), None
        if cursor is not None:
            at, key = _read_cursor(cursor, digest)
            try:
                after = UnitKey.model_validate(key)
            except ValueError:
                raise InvalidInput("cursor: not a cursor this listing gave") from None
        units = self.store.page_units(scope, query, at, after, limit + 1)
        more = len(units) > limit
        last = units[limit - 1] if more else None
        return UnitPage(
            units=tuple(units[:limit]),
            next_cursor=_cursor(digest, at, {"created_at": last.time.created_at.isoformat(), "id": last.id})
            if last
            else None,
        )

    def entities(
        self,
        subject: SubjectLike,
        project: str | None = None,
        prefix: str = "",
        as_of: Time = None,
        known_at: Time = None,
        cursor: str | None = None,
        limit: PageSize = 50,
    ) -> EntityPage:
        """A page of the subject's entities by name: those whose normalised name starts with
        ``prefix`` (completion), each with its other spellings, how many facts about it hold at
        (as_of, known_at) (default now) and when one last changed."""
        if len(prefix) > MAX_FILTER_CHARS:
            raise InvalidInput(f"prefix: at most {MAX_FILTER_CHARS} characters")
        scope = as_scope(subject, project)
        digest = _digest("entities", scope, {"prefix": normalise(prefix)})
        at, after = point_in_time(as_of, known_at), ""
        if cursor is not None:
            at, key = _read_cursor(cursor, digest)
            after = str(key.get("name", ""))
        found = self.store.page_entities(scope, at, prefix, after, limit + 1)
        more = len(found) > limit
        return EntityPage(
            entities=tuple(found[:limit]),
            next_cursor=_cursor(digest, at, {"name": normalise(found[limit - 1].name)}) if more else None,
        )

    def entity(self, name: str, subject: SubjectLike, project: str | None = None) -> dict[str, Any]:
        """One entity as seen now: ``{"entity": EntitySummary, "facts": [MemoryUnit], "history":
        [...]}``: its current facts, newest first (at most 1000), and its timeline as ``history``
        gives it (ended and retracted facts too). Raises ``NotFound``."""
        scope = as_scope(subject, project)
        norm = normalise(name)
        if len(name) > MAX_FILTER_CHARS:
            raise InvalidInput(f"name: at most {MAX_FILTER_CHARS} characters")
        at = point_in_time()
        found = [e for e in self.store.page_entities(scope, at, norm, "", 1) if norm and normalise(e.name) == norm]
        if not found:
            raise NotFound(f"no entity {name!r} in scope {scope}")
        facts = self.store.page_units(scope, UnitQuery(entity=name, status=UnitStatus.current), at, None, MAX_K)
        return {
            "entity": found[0],
            "facts": facts,
            "history": self.history(scope, entity=name, include_expired=True),
        }


def _digest(what: str, scope: Scope, filters: dict[str, Any]) -> str:
    """What a cursor was made for: the listing, its scope and its filters."""
    text = json.dumps([what, scope.key, filters], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cursor(digest: str, at: AsOf, key: dict[str, str]) -> str:
    body = {"f": digest, "t": at.valid.isoformat(), "s": at.known.isoformat(), "k": key}
    return base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).decode().rstrip("=")


def _read_cursor(cursor: str, digest: str) -> tuple[AsOf, dict[str, Any]]:
    """The point in time and last key a cursor holds; ``InvalidInput`` when it is not one of
    this listing's (another listing's, other filters, or not a cursor at all)."""
    if len(cursor) > MAX_CURSOR_CHARS:
        raise InvalidInput("cursor: not a cursor this listing gave")
    try:
        body = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        at = AsOf(valid=datetime.fromisoformat(body["t"]), known=datetime.fromisoformat(body["s"]))
        key, made_for = body["k"], body["f"]
        if not isinstance(key, dict):
            raise TypeError("key")
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidInput("cursor: not a cursor this listing gave") from exc
    if made_for != digest:
        raise InvalidInput("cursor: given with other filters or another subject than the page it came from")
    return at, key
