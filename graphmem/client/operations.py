"""The facade's methods over HTTP, written once for both clients: each builds its steps
(``graphmem.client.calls``) and hands them to ``_run``, which ``Client`` runs at once and
``AsyncClient`` as a coroutine. Names, arguments and errors are the facade's; results are the
API's typed answers (``graphmem.http.schemas``) or the domain's records."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from graphmem.client import calls
from graphmem.client.calls import Call, SubjectLike, one, path
from graphmem.domain.models import Episode, Fact, MemoryBlock, MemoryKind, Scope, Standing
from graphmem.errors import InvalidInput
from graphmem.http import schemas


class Operations:
    """The facade's names, sent to a graphmem server (``graphmem serve``)."""

    def _run(self, steps: calls.Steps[Any]) -> Any:
        raise NotImplementedError

    # -- writes -----------------------------------------------------------------------------------
    def remember(
        self,
        text: str,
        subject: SubjectLike,
        at: datetime | None = None,
        channel: str = "chat",
        facts: Sequence[Fact] = (),
        project: str | None = None,
        extractor: str | None = None,
        episode_id: str | None = None,
    ) -> schemas.Ingested:
        """Write one episode. Without ``episode_id`` one is made here, so a retry of this call
        finds the episode stored instead of writing it twice. ``at``: when it happened [now]."""
        scope = Scope.parse(*calls.scoped(subject, project))
        fields: dict[str, Any] = {"scope": scope, "raw": text, "channel": channel, "facts": tuple(facts)}
        fields["occurred_at"] = at if at is not None else datetime.now().astimezone()
        calls.instant(fields["occurred_at"], "at")
        if episode_id is not None:
            fields["id"] = episode_id
        return self._run(calls.mapped(calls.ingest([Episode(**fields)], extractor), calls.refused))

    def ingest(self, episodes: Iterable[Episode], extractor: str | None = None) -> schemas.Ingested:
        """Write episodes (each keeps its id: writing them again stores nothing twice), in
        requests of at most ``calls.EPISODES_PER_REQUEST`` per subject; failed items are named
        by their index in ``episodes``."""
        listed = list(episodes)
        if not all(isinstance(e, Episode) for e in listed):
            raise InvalidInput("episodes: Episode objects (graphmem.domain.models.Episode)")
        return self._run(calls.ingest(listed, extractor))

    def complete(self, subject: SubjectLike, project: str | None = None) -> schemas.WriteReport:
        """Decide the episodes a write stored but never decided (recall's ``incomplete``)."""
        url, params = path(subject, project, "complete")
        return self._run(calls.write(Call("POST", url, params), schemas.WriteReport))

    def retract(self, unit_id: str, subject: SubjectLike, reason: str, project: str | None = None) -> schemas.Operated:
        url, params = path(subject, project, "units", unit_id, "retract")
        return self._run(one(Call("POST", url, params, {"reason": reason}, resend=False), schemas.Operated))

    def end(
        self, unit_id: str, subject: SubjectLike, reason: str, at: datetime | None = None, project: str | None = None
    ) -> schemas.Operated:
        url, params = path(subject, project, "units", unit_id, "end")
        body = {"reason": reason, "at": calls.instant(at, "at")}
        return self._run(one(Call("POST", url, params, body, resend=False), schemas.Operated))

    def set_block(
        self,
        subject: SubjectLike,
        label: str,
        value: str,
        token_budget: int | None = None,
        description: str | None = None,
        writable: bool | None = None,
        truncate: bool = False,
        admin: bool = False,
        project: str | None = None,
    ) -> MemoryBlock:
        url, params = path(subject, project, "blocks", label)
        body = {"value": value, "token_budget": token_budget, "description": description, "writable": writable}
        body.update(truncate=truncate, admin=admin)
        return self._run(calls.recorded(MemoryBlock, Call("PUT", url, params, body)))

    def delete_block(self, subject: SubjectLike, label: str, project: str | None = None, admin: bool = False) -> None:
        url, params = path(subject, project, "blocks", label)
        return self._run(calls.nothing(Call("DELETE", url, {**params, **({"admin": "true"} if admin else {})})))

    # -- reads ------------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        subject: SubjectLike,
        k: int = 10,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        hops: int = 0,
        kinds: Sequence[MemoryKind | str] = (),
        include_shared: bool = False,
        project: str | None = None,
        mode: str = "hybrid",
        rerank: bool | None = None,
    ) -> schemas.Recalled:
        """The k best units visible at (``as_of``, ``known_at``) [now, now]; ``rerank``: with
        the cross-encoder or not (None: as the server is set)."""
        url, params = path(subject, project, "recall")
        body = {
            "query": query,
            "k": k,
            "as_of": calls.instant(as_of, "as_of"),
            "known_at": calls.instant(known_at, "known_at"),
            "hops": hops,
            "kinds": [MemoryKind(kind).value for kind in kinds],
            "include_shared": include_shared,
            "mode": mode,
            **({} if rerank is None else {"rerank": rerank}),
        }
        return self._run(one(Call("POST", url, params, body), schemas.Recalled))

    def assemble(
        self,
        query: str,
        subject: SubjectLike,
        budget: int | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        include_shared: bool = False,
        project: str | None = None,
        hops: int = 0,
    ) -> schemas.Assembly:
        url, params = path(subject, project, "assemble")
        body = {
            "query": query,
            "budget": budget,
            "as_of": calls.instant(as_of, "as_of"),
            "known_at": calls.instant(known_at, "known_at"),
            "include_shared": include_shared,
            "hops": hops,
        }
        return self._run(one(Call("POST", url, params, body), schemas.Assembly))

    def history(
        self,
        subject: SubjectLike,
        entity: str | None = None,
        unit_id: str | None = None,
        known_at: datetime | None = None,
        include_expired: bool = False,
        project: str | None = None,
    ) -> list[schemas.HistoryEntry]:
        url, params = path(subject, project, "history")
        given = {"entity": entity, "unit_id": unit_id, "known_at": calls.instant(known_at, "known_at")}
        params.update({k: v for k, v in given.items() if v is not None})
        if include_expired:
            params["include_expired"] = "true"
        return self._run(calls.mapped(one(Call("GET", url, params), schemas.History), lambda h: h.entries))

    def explain(self, unit_id: str, subject: SubjectLike, project: str | None = None) -> schemas.Explanation:
        url, params = path(subject, project, "units", unit_id)
        return self._run(one(Call("GET", url, params), schemas.Explanation))

    def trace(self, trace_id: str, subject: SubjectLike, project: str | None = None) -> schemas.TraceView | None:
        url, params = path(subject, project, "traces", trace_id)
        return self._run(calls.trace(Call("GET", url, params)))

    def decisions(
        self,
        subject: SubjectLike,
        project: str | None = None,
        episode_id: str | None = None,
        op: str | None = None,
        limit: int = 100,
    ) -> list[schemas.LoggedDecision]:
        """The decision log, newest first (at most ``limit``)."""
        url, params = path(subject, project, "decisions")
        params.update({k: v for k, v in {"episode": episode_id, "op": op and op.upper()}.items() if v})
        rows = calls.paged(Call("GET", url, params), "decisions", limit)
        return self._run(calls.mapped(rows, lambda found: [schemas.LoggedDecision.model_validate(r) for r in found]))

    def units(
        self,
        subject: SubjectLike,
        project: str | None = None,
        kind: MemoryKind | str | None = None,
        entity: str | None = None,
        contains: str | None = None,
        status: Standing | str = Standing.current,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> schemas.UnitPage:
        """A page of the subject's units, newest first; send ``next_cursor`` back as ``cursor``,
        with the same filters, for the next. ``status``: current, ended, retracted or all."""
        url, params = path(subject, project, "units")
        given = {
            "kind": None if kind is None else MemoryKind(kind).value,
            "entity": entity,
            "contains": contains,
            "status": Standing(status).value,
            "as_of": calls.instant(as_of, "as_of"),
            "known_at": calls.instant(known_at, "known_at"),
            "cursor": cursor,
            "limit": limit,
        }
        params.update({k: v for k, v in given.items() if v is not None})
        return self._run(one(Call("GET", url, params), schemas.UnitPage))

    def entities(
        self,
        subject: SubjectLike,
        project: str | None = None,
        prefix: str = "",
        cursor: str | None = None,
        limit: int = 50,
    ) -> schemas.EntityPage:
        """A page of the subject's entities by name (those starting with ``prefix``)."""
        url, params = path(subject, project, "entities")
        params.update({k: v for k, v in {"prefix": prefix, "cursor": cursor, "limit": limit}.items() if v})
        return self._run(one(Call("GET", url, params), schemas.EntityPage))

    def entity(self, name: str, subject: SubjectLike, project: str | None = None) -> schemas.EntityView:
        """One entity: its facts that hold now and its timeline. Raises ``NotFound``."""
        url, params = path(subject, project, "entities", name)
        return self._run(one(Call("GET", url, params), schemas.EntityView))

    def episodes(
        self, subject: SubjectLike, project: str | None = None, offset: int = 0, limit: int = 100
    ) -> list[Episode]:
        return self._run(calls.episodes(subject, project, offset, limit))

    def episode(self, episode_id: str, subject: SubjectLike, project: str | None = None) -> Episode:
        url, params = path(subject, project, "episodes", episode_id)
        return self._run(calls.recorded(Episode, Call("GET", url, params)))

    def list_blocks(self, subject: SubjectLike, project: str | None = None) -> list[MemoryBlock]:
        return self._run(calls.blocks(subject, project))

    def get_block(self, subject: SubjectLike, label: str, project: str | None = None) -> MemoryBlock:
        url, params = path(subject, project, "blocks", label)
        return self._run(calls.recorded(MemoryBlock, Call("GET", url, params)))

    def subjects(self) -> list[schemas.Subject]:
        return self._run(calls.mapped(one(Call("GET", "/v1/subjects"), schemas.Subjects), lambda s: s.subjects))

    def me(self) -> schemas.Me:
        """The key this client sends (null on a server without keys)."""
        return self._run(one(Call("GET", "/v1/me"), schemas.Me))

    # -- lifecycle --------------------------------------------------------------------------------
    def delete_episode(
        self, episode_id: str, subject: SubjectLike, project: str | None = None
    ) -> schemas.EpisodeDeleted:
        url, params = path(subject, project, "episodes", episode_id)
        return self._run(one(Call("DELETE", url, params), schemas.EpisodeDeleted))

    def forget(self, subject: SubjectLike, project: str | None = None) -> Any:
        """Erase the subject (all its projects, or the one named): the erasure receipt."""
        url, params = path(subject, project)
        return self._run(one(Call("DELETE", url, {**params, "confirm": "true"}), schemas.Erasure))

    def export(self, subject: SubjectLike, project: str | None = None) -> list[dict[str, Any]]:
        """Every record of the subject, header first, as the export's JSON objects."""
        return self._run(calls.export(subject, project))

    def import_(self, records: Iterable[Mapping[str, Any]], force: bool = False) -> schemas.Imported:
        """Import an export's records (an admin key): records already stored are skipped."""
        content = "".join(json.dumps(r) + "\n" for r in records).encode()
        call = Call("POST", "/v1/import", {"force": "true"} if force else {}, None, content, "application/x-ndjson")
        return self._run(one(call, schemas.Imported))
