"""LangGraph's long-term memory store over graphmem: ``GraphMemStore`` implements langgraph's
``BaseStore`` on the facade (docs/langgraph.md).

- A namespace is a subject: ``("memories", "alice")`` is ``user:memories.alice`` (LangGraph
  forbids dots in labels) in the store's project, ``langgraph`` by default.
- An item is a single-valued fact about its key. A new value ends the old one (an UPDATE with its
  reason) and a delete ends it, so history and as-of queries keep every past value.
- Each put is an episode holding the exact value as JSON; get reads the value back from it.
- A batch answers its reads first, then writes its puts, the last one per key, in one write.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path
from langgraph.store.memory import _compare_values, _does_match

from graphmem.api import GraphMem
from graphmem.domain.limits import MAX_K
from graphmem.domain.models import Episode, Fact, MemoryUnit, Scope, UnitStatus, utcnow
from graphmem.domain.models.text import MAX_CONTENT_CHARS
from graphmem.domain.tokenise import normalise
from graphmem.errors import InvalidInput, error_line

#: The predicate of every item's fact: (key, PREDICATE, digest of the value).
PREDICATE = "holds item"
CHANNEL = "langgraph"
#: A put's ``index``: its own paths, none (``False``: out of query searches), or the store's.
Indexed = list[str] | Literal[False] | None
#: How many envelopes (episodes are immutable: a cached one never goes stale) a store keeps read.
ENVELOPES = 4096


@dataclass(frozen=True)
class _Put:
    scope: Scope
    op: PutOp


@dataclass(frozen=True)
class _Stored:
    """A current item, the ``index`` it was put with and its fact's object."""

    item: Item
    index: Indexed
    digest: str


class GraphMemStore(BaseStore):
    """A LangGraph ``BaseStore`` whose namespaces are graphmem subjects of one type and project.

    ``fields`` are the JSON paths whose text is searched (LangGraph's ``IndexConfig.fields``;
    ``$``: the whole value); a put's own ``index`` overrides them, and ``index=False`` keeps the
    item out of query searches. graphmem's embedder does the embedding. TTLs are not supported.
    """

    def __init__(
        self,
        memory: GraphMem,
        *,
        subject_type: str = "user",
        project: str | None = "langgraph",
        fields: Sequence[str] = ("$",),
        actor: str = "langgraph",
    ) -> None:
        self.memory = memory
        self.subject_type = subject_type
        self.project = project
        self.fields = tuple(fields)
        self.actor = actor
        self._envelope = functools.lru_cache(maxsize=ENVELOPES)(self._read_envelope)
        # The project as scopes store it, to tell this store's subjects from the others.
        self._project = Scope.parse(f"{subject_type}:x", project).project_id

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: the reads in order against the memory as it was, then the puts (the last
        one per namespace and key, in order of first appearance) in one ingest."""
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], _Put] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = _Put(self._scope(op.namespace), op)
                results.append(None)
            else:
                raise ValueError(f"unknown operation: {type(op).__name__}")
        episodes = [e for put in puts.values() if (e := self._episode(put)) is not None]
        if episodes:
            self.memory.ingest(episodes, actor=self.actor)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread: the facade is synchronous."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- namespaces ------------------------------------------------------------------------

    def _scope(self, namespace: tuple[str, ...]) -> Scope:
        """The subject a namespace names; a namespace no subject can hold is refused."""
        if not namespace or any(not isinstance(label, str) or not label or "." in label for label in namespace):
            raise InvalidNamespaceError(f"namespace {namespace!r}: labels are non-empty strings without dots")
        joined = ".".join(namespace)
        try:
            scope = Scope.parse(f"{self.subject_type}:{joined}", self.project)
        except ValueError as exc:
            raise InvalidNamespaceError(f"namespace {namespace!r}: {error_line(exc)}") from None
        if scope.subject_id != joined:
            raise InvalidNamespaceError(
                f"namespace {namespace!r}: a label is not in Unicode NFC or has surrounding whitespace"
            )
        return scope

    def _namespaces(self) -> Iterator[tuple[tuple[str, ...], Scope]]:
        """This store's subjects (of its type and project) as namespaces."""
        for row in self.memory.subjects():
            scope: Scope = row["scope"]
            if scope.subject_type.value == self.subject_type and scope.project_id == self._project:
                yield tuple(scope.subject_id.split(".")), scope

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = [
            namespace
            for namespace, scope in self._namespaces()
            if all(_does_match(condition, namespace) for condition in op.match_conditions or ())
            and self.memory.units(scope, status=UnitStatus.current, limit=1).units
        ]
        if op.max_depth is not None:
            found = [namespace[: op.max_depth] for namespace in found]
        return sorted(set(found))[op.offset : op.offset + op.limit]

    # -- reads -----------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        try:
            scope = self._scope(op.namespace)
        except InvalidNamespaceError:
            return None  # a namespace no put can write holds nothing
        stored = self._current(scope, op.key)
        return stored.item if stored else None

    def _current(self, scope: Scope, key: str) -> _Stored | None:
        return next(self._stored(scope, key), None)

    def _stored(self, scope: Scope, key: str | None = None) -> Iterator[_Stored]:
        """The scope's current items (the one of ``key``, when given), newest first."""
        entity = _entity(key) if key is not None else None
        cursor = None
        while True:
            page = self.memory.units(scope, entity=entity, status=UnitStatus.current, cursor=cursor, limit=MAX_K)
            for unit in page.units:
                stored = self._shown(unit, scope)
                if stored is not None and (key is None or stored.item.key == key):
                    yield stored
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def _shown(self, unit: MemoryUnit, scope: Scope) -> _Stored | None:
        """The item a unit shows; None for a unit that is no item."""
        triple = unit.triple
        if triple is None or normalise(triple.predicate) != normalise(PREDICATE):
            return None
        envelope = self._envelope(scope, unit.source.episode_id)
        if envelope is None:
            return None
        item = Item(
            namespace=tuple(envelope["namespace"]),
            key=envelope["key"],
            value=envelope["value"],
            created_at=datetime.fromisoformat(envelope["created_at"]),
            updated_at=datetime.fromisoformat(envelope["updated_at"]),
        )
        return _Stored(item, envelope.get("index"), triple.object or "")

    def _read_envelope(self, scope: Scope, episode_id: str) -> dict[str, Any] | None:
        try:
            envelope = json.loads(self.memory.episode(episode_id, scope).raw)
        except ValueError:
            return None  # an episode written by another face: its text is no item
        return envelope if isinstance(envelope, dict) and "value" in envelope else None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        scopes = [scope for namespace, scope in self._namespaces() if namespace[: len(prefix)] == prefix]
        wanted = op.offset + op.limit
        if op.query:
            found = [hit for scope in scopes for hit in self._recalled(op, scope, wanted)]
            found.sort(key=lambda hit: -(hit.score or 0.0))
        else:
            found = [
                _search_item(stored.item)
                for scope in scopes
                for stored in self._stored(scope)
                if _matches(stored.item.value, op.filter)
            ]
            found.sort(key=lambda item: (item.updated_at, item.key), reverse=True)
        return found[op.offset : wanted]

    def _recalled(self, op: SearchOp, scope: Scope, wanted: int) -> list[SearchItem]:
        """The scope's items the query finds, best first: at least ``wanted`` when that many
        match the filter among the best ``MAX_K`` units."""
        assert op.query is not None
        k = min(MAX_K, max(wanted, 10))
        while True:
            hits = self.memory.recall(op.query, scope, k=k)
            found = []
            for hit in hits:
                stored = self._shown(hit.unit, scope)
                if stored is not None and stored.index is not False and _matches(stored.item.value, op.filter):
                    found.append(_search_item(stored.item, hit.score))
            if len(found) >= wanted or len(hits) < k or k == MAX_K:
                return found
            k = min(MAX_K, k * 4)

    # -- writes ----------------------------------------------------------------------------

    def _episode(self, put: _Put) -> Episode | None:
        """The episode a put writes (``_written``); a value graphmem cannot hold is refused with
        one line naming the item."""
        op = put.op
        try:
            if op.value is not None and not isinstance(op.value, Mapping):
                raise TypeError(f"the value is a {type(op.value).__name__}, not a dict (a JSON object)")
            return self._written(put)
        except (TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise InvalidInput(f"item {op.key[:60]!r} of {op.namespace!r}: {error_line(exc)}") from None

    def _written(self, put: _Put) -> Episode | None:
        """A new value asserted, or the current one ended; None when nothing changes (the same
        value again, or a delete of nothing)."""
        op, scope = put.op, put.scope
        current = self._current(scope, op.key)
        now = utcnow()
        if current is not None:  # after the current value in world time, whatever the clock says
            now = max(now, current.item.updated_at + timedelta(microseconds=1))
        envelope: dict[str, Any] = {"namespace": list(op.namespace), "key": op.key}
        if op.value is None:
            if current is None:
                return None
            entity = _entity(op.key)
            ended = Fact(subject=entity, predicate=PREDICATE, object=current.digest, single_valued=True, op="end")
            envelope |= {"deleted": True, "at": now.isoformat()}
            return Episode(scope=scope, occurred_at=now, raw=_dumps(envelope), channel=CHANNEL, facts=(ended,))
        value = dict(op.value)
        index: Indexed = op.index if op.index is False or op.index is None else list(op.index)
        if current is not None and (current.item.value, current.index) == (value, index):
            return None
        envelope |= {
            "value": value,
            "index": index,
            "created_at": (current.item.created_at if current is not None else now).isoformat(),
            "updated_at": now.isoformat(),
        }
        asserted = Fact(
            subject=_entity(op.key),
            predicate=PREDICATE,
            object=_digest(value, index),
            content=self._text(op.key, value, index),
            single_valued=True,
        )
        return Episode(scope=scope, occurred_at=now, raw=_dumps(envelope), channel=CHANNEL, facts=(asserted,))

    def _text(self, key: str, value: dict[str, Any], index: Indexed) -> str:
        """What search reads of a value: the text at its indexed paths (the key, when none)."""
        paths = self.fields if index is None else () if index is False else index
        texts = [text for path in paths for text in get_text_at_path(value, path)]
        return "\n".join(texts)[:MAX_CONTENT_CHARS].strip() or key


@functools.lru_cache(maxsize=ENVELOPES)
def _entity(key: str) -> str:
    """The entity an item's fact is about: its key, when graphmem keeps the key as written as a
    name; else the key (or "item", when it is no name at all) with a digest of it, so no two keys
    share a slot."""
    if normalise(key) == key and _is_name(key):
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{key if _is_name(key) else 'item'} #{digest}"


def _is_name(text: str) -> bool:
    if not text.strip() or len(text) > 200:
        return False
    try:
        Fact(subject=text, predicate=PREDICATE)
    except ValueError:
        return False
    return True


def _digest(value: dict[str, Any], index: Indexed) -> str:
    """The fact's object: one value per value and index, so a change is an UPDATE."""
    text = json.dumps([value, index], sort_keys=True, ensure_ascii=True, default=str)
    return "value " + hashlib.sha256(text.encode()).hexdigest()[:24]


def _dumps(record: dict[str, Any]) -> str:
    """Strict JSON: NaN and infinities are refused, as JSON has none."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    """LangGraph's filter: every key matches (exactly, or by ``$eq``, ``$gt``... operators). A
    comparison with a missing or non-numeric value fails, as on LangGraph's Postgres store
    (its in-memory store raises)."""
    try:
        return all(_compare_values(value.get(k), v) for k, v in (wanted or {}).items())
    except (TypeError, ValueError):
        return False


def _search_item(item: Item, score: float | None = None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
