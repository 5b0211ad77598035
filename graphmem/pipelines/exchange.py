"""Export and import of a whole subject, lossless on both time axes (docs/operations.md,
"Export and import").

- An export is JSON Lines: a header (``Header``), then every record of the scope kind by kind
  (``RECORD_KINDS``), each ``{"type": kind, ...}`` in its JSON form (``graphmem.pipelines.shapes``).
- Nothing derived is exported: search entries, entity words, mention links, the links between
  records. Nor are lock versions (they only order writers in flight) and commit keys: an import
  is idempotent by the records' own ids.
- An import validates every record before it writes anything (``export_check.read``), refuses a subject
  erased here unless forced, skips a record already stored and refuses another one under the
  same key (``Conflict``, nothing written).
- It writes in bounded transactions, each unit whole with what says what it is (``_parts``): an
  import cut short never shows a unit current that the export ends or archives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Protocol

from graphmem.domain.models import (
    RECORD_KINDS,
    Decision,
    Episode,
    Invalidation,
    MemoryBlock,
    MemoryUnit,
    RecordKind,
    Scope,
    Usage,
    WriteBatch,
    utcnow,
)
from graphmem.errors import Conflict
from graphmem.pipelines import shapes
from graphmem.pipelines.export_check import Plan, describe, identity, key
from graphmem.pipelines.write import mention_links
from graphmem.ports import BlockStore, ErasureStore, ExchangeStore, MemoryIndex, Record, UnitStore, each

FORMAT = "graphmem-export"
VERSION = 1
#: Records per transaction on import, and per read on export.
BATCH = 500


def export(
    store: ExchangeStore, scope: Scope, batch: int = BATCH, now: datetime | None = None
) -> Iterator[dict[str, Any]]:
    """The header, then every record of the scope, kind by kind, read a page at a time."""
    yield shapes.header(scope, now or utcnow(), FORMAT, VERSION)
    for kind in RECORD_KINDS:
        after: str | None = ""
        while after is not None:
            page, after = store.dump(scope, kind, after, batch)
            for record in page:
                yield {"type": kind, **shapes.SHAPES[kind](record)}


class ImportStore(ExchangeStore, ErasureStore, BlockStore, UnitStore, Protocol):
    """What an import reads (erasures, stored records, block labels, known names) and loads."""


def import_plan(
    store: ImportStore,
    index: MemoryIndex,
    plan: Plan,
    force: bool = False,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Write a validated export (see the module docstring). Returns the scope and, per kind,
    how many records were ``imported`` and how many were already stored (``skipped``).
    ``progress`` is told how many records each write stored (skipped ones count at once).

    Raises:
        Conflict: the subject was erased here and the import would write something (and not
            ``force``), or a key is held by another record (of another subject, or with other
            content); nothing is written then.
    """
    scope = plan.scope
    fresh, skipped = _new(store, plan, batch)
    # An erased subject comes back only when forced; an import that would write nothing (the
    # same file again after a forced one) is no return of what was erased, so it skips as any.
    if not force and any(fresh.values()) and store.erased(scope):
        raise Conflict(
            f"{scope} was erased from this database: import it again only with force (--force, force=true over HTTP)"
        )
    if progress:
        progress(sum(skipped.values()))
    # Mention links are derived: drawn with what every imported text makes known, and, for
    # texts stored before, by the names new here (with the first texts, before those are
    # searchable, as a write draws them).
    links = mention_links(store, scope, each(MemoryUnit, fresh["unit"]), each(Episode, fresh["episode"]))
    anchored: RecordKind = "unit" if fresh["unit"] else "episode"
    anchors = links.get("anchors", ())
    given = plan.vectors if plan.vector_model == index.embedder.name else {}
    parts = list(_parts(fresh, batch))
    # Search entries are written with their units: the next part's vectors are computed while
    # a part is written, so the embedder and the database work at once.
    with ThreadPoolExecutor(max_workers=1) as ahead:
        embedding = [ahead.submit(_vectors, index, given, part.get("unit", ())) for part in parts[:1]]
        for n, part in enumerate(parts):
            if n + 1 < len(parts):
                embedding.append(ahead.submit(_vectors, index, given, parts[n + 1].get("unit", ())))
            derived = WriteBatch()
            if part.get(anchored) and anchors:  # with the first texts, before those are searchable
                derived, anchors = WriteBatch(anchors=anchors), ()
            if part.get("unit"):
                units = each(MemoryUnit, part["unit"])
                derived = derived.model_copy(
                    update={
                        "vectors": embedding[n].result(),
                        "vector_model": index.embedder.name,
                        "unit_mentions": {u.id: links["unit_mentions"][u.id] for u in units},
                    }
                )
            if part.get("episode"):
                derived = derived.model_copy(
                    update={
                        "episode_mentions": {
                            e.id: links["episode_mentions"][e.id] for e in each(Episode, part["episode"])
                        }
                    }
                )
            store.load(scope, part, derived)
            if progress:
                progress(sum(map(len, part.values())))
    return {
        **shapes.scope(scope),
        "imported": {k: len(fresh[k]) for k in RECORD_KINDS},
        "skipped": {k: skipped[k] for k in RECORD_KINDS},
    }


def _vectors(index: MemoryIndex, given: Mapping[str, list[float]], records: Iterable[Record]) -> dict[str, list[float]]:
    """The units' vectors: those the export gives (of this index's model), the rest embedded."""
    units = each(MemoryUnit, records)
    missing = [u for u in units if len(given.get(u.id, ())) != index.embedder.dimension]
    embedded = dict(zip((u.id for u in missing), index.vectors([u.searched for u in missing]))) if missing else {}
    return {u.id: embedded.get(u.id) or given[u.id] for u in units}


#: Record kinds that say together what is true: a unit, the decisions that made or ended it,
#: its invalidations and its archive state, and everything of its timeline group.
LINKED: tuple[RecordKind, ...] = ("unit", "deletion", "decision", "invalidation", "usage")


def _parts(fresh: dict[RecordKind, list[Record]], batch: int) -> Iterator[dict[RecordKind, list[Record]]]:
    """The records to write, in transactions of about ``batch`` records: entities and
    episodes first; then the linked kinds whole (``LINKED``: what links them by id or timeline
    group goes in one transaction, so a cut-short import never shows a unit without what
    ended or archived it, and a re-run writes whole parts); then blocks, reviews and traces."""
    yield from _chunks(fresh, ("entity", "episode"), batch)
    part: dict[RecordKind, list[Record]] = {}
    for component in _components(fresh):
        for kind, record in component:
            part.setdefault(kind, []).append(record)
        if sum(map(len, part.values())) >= batch:
            yield part
            part = {}
    if part:
        yield part
    yield from _chunks(fresh, ("block", "review", "trace"), batch)


def _chunks(
    fresh: dict[RecordKind, list[Record]], kinds: Iterable[RecordKind], batch: int
) -> Iterator[dict[RecordKind, list[Record]]]:
    """The records of each of ``kinds``, ``batch`` at a time, one kind a part."""
    for kind in kinds:
        for start in range(0, len(fresh[kind]), batch):
            yield {kind: fresh[kind][start : start + batch]}


def _components(fresh: dict[RecordKind, list[Record]]) -> list[list[tuple[RecordKind, Record]]]:
    """The linked records (``LINKED``) grouped by what links them (``Components``), each group
    in the records' order."""
    links = Components()
    items = [(kind, r, links.add(r)) for kind in LINKED for r in fresh[kind]]
    components: dict[tuple[str, str], list[tuple[RecordKind, Record]]] = {}
    for kind, r, own in items:
        components.setdefault(links.root(own), []).append((kind, r))
    return list(components.values())


class Components:
    """Linked records joined by what links them: a decision to the units it targeted and
    produced and to its deletion, an invalidation to its unit and decision, usage to its unit,
    a unit or decision to its timeline group (a union-find over those ids)."""

    def __init__(self) -> None:
        self.parent: dict[tuple[str, str], tuple[str, str]] = {}

    def root(self, node: tuple[str, str]) -> tuple[str, str]:
        parent = self.parent
        while parent.setdefault(node, node) != node:
            parent[node] = node = parent[parent[node]]
        return node

    def add(self, r: Record) -> tuple[str, str]:
        """Join the record's links; the node it is grouped by (its ``root`` names its group)."""
        own, others = _links(r)
        for kind, other in others:
            if other is not None:
                self.parent[self.root((kind, other))] = self.root(own)
        return own


def _links(r: Record) -> tuple[tuple[str, str], tuple[tuple[str, str | None], ...]]:
    if isinstance(r, MemoryUnit):
        return ("unit", r.id), (("group", r.group),)
    if isinstance(r, Decision):
        group = r.event.group if r.event else None
        return ("decision", r.id), (
            ("unit", r.target_id),
            ("unit", r.produced_id),
            ("deletion", r.deletion_id),
            ("group", group),
        )
    if isinstance(r, Invalidation):
        return ("unit", r.unit_id), (("decision", r.decision_id),)
    if isinstance(r, Usage):
        return ("unit", r.unit_id), ()
    return ("deletion", key("deletion", r)), ()


def _new(store: ImportStore, plan: Plan, batch: int) -> tuple[dict[RecordKind, list[Record]], Counter[str]]:
    """The records of the plan not stored yet, by kind, and how many of each are; ``Conflict``
    when a key is held by another record."""
    scope = plan.scope
    fresh: dict[RecordKind, list[Record]] = {}
    skipped: Counter[str] = Counter()
    for kind in RECORD_KINDS:
        items = plan.records[kind]
        stored: dict[Any, Record] = {}
        keys = sorted({key(kind, r) for _, r in items})
        for start in range(0, len(keys), batch):
            found, elsewhere = store.lookup(scope, kind, keys[start : start + batch])
            if elsewhere:
                raise Conflict(f"{kind} {min(elsewhere)} already exists in another subject")
            stored.update((identity(kind, r), r) for r in found)
        fresh[kind] = []
        for where, r in items:
            old = stored.get(identity(kind, r))
            if old is None:
                fresh[kind].append(r)
            elif same(kind, old, r) or kind == "usage":
                # Recall statistics count on after an export: the stored ones are the newer.
                skipped[kind] += 1
            else:
                raise Conflict(f"{where}: {describe(kind, r)} already exists with other content")
    labels = {b.label: b.id for b in store.list_blocks(scope)}
    for block in each(MemoryBlock, fresh["block"]):
        if block.label in labels:
            raise Conflict(f"block {block.label!r} of {scope} already exists as block {labels[block.label]}")
    return fresh, skipped


def same(kind: RecordKind, stored: Record, given: Record) -> bool:
    """Whether a stored record is the given one: an episode by its fingerprint (what "the same
    content" means for an episode id), anything else by its whole record."""
    if isinstance(stored, Episode) and isinstance(given, Episode):
        return stored.fingerprint == given.fingerprint
    return shapes.SHAPES[kind](stored) == shapes.SHAPES[kind](given)
