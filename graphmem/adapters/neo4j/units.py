"""``UnitStore`` on Neo4j: units as some (T, S) sees them, the names and texts a write reads,
recall statistics and archive state (on a Usage node beside each unit, never on the unit)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import Neo4jConnection, run
from graphmem.adapters.neo4j.names import known_names_in, names_key, texts_changed, texts_naming
from graphmem.adapters.neo4j.rows import group_unit, scope_props, unit_from_row
from graphmem.domain.models import (
    AsOf,
    GroupUnit,
    MemoryUnit,
    NamesRead,
    Page,
    RecallStats,
    Scope,
    TextsRead,
    UnitFilter,
    entity_id,
)


class Neo4jUnits:
    """``graphmem.ports.UnitStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    # -- units ------------------------------------------------------------------------------
    def get_unit(self, unit_id: str, scope: Scope, at: AsOf | None = None) -> MemoryUnit | None:
        flt = UnitFilter(ids=(unit_id,), include_expired=at is None)
        found = self.list_units(scope, flt, Page(limit=1), at)
        return found[0] if found else None

    def list_units(
        self, scope: Scope, flt: UnitFilter, page: Page = Page(), at: AsOf | None = None
    ) -> list[MemoryUnit]:
        at = at or AsOf.now()
        rows = self.conn.read(
            "store/list_units",
            scope=scope.key,
            ids=list(flt.ids) if flt.ids is not None else None,
            hashes=list(flt.content_hashes) if flt.content_hashes is not None else None,
            slots=list(flt.slots) if flt.slots is not None else None,
            kind=flt.kind.value if flt.kind else None,
            labels=list(flt.labels),
            include_expired=flt.include_expired,
            valid=at.valid,
            known=at.known,
            offset=page.offset,
            limit=page.limit,
        )
        return [unit_from_row(r) for r in rows]

    def unit_records(self, scope: Scope, ids: Sequence[str]) -> list[GroupUnit]:
        rows = self.conn.read("store/unit_records", scope=scope.key, ids=list(dict.fromkeys(ids)))
        return [group_unit(r) for r in rows]

    def units_naming(self, scope: Scope, entity: str) -> list[GroupUnit]:
        rows = self.conn.read("store/units_naming", scope=scope.key, entity_id=entity_id(scope, entity))
        return [group_unit(r) for r in rows]

    def list_scopes(self) -> list[Scope]:
        return [Scope(**r) for r in self.conn.read("store/list_scopes")]

    # -- names and the texts naming them ----------------------------------------------------
    def unit_entities(self, scope: Scope, unit_id: str) -> list[tuple[str, str]]:
        return [(r["name"], r["kind"]) for r in self.conn.read("mentions/unit_entities", scope=scope.key, id=unit_id)]

    def episode_entities(self, scope: Scope, episode_id: str) -> list[tuple[str, str]]:
        return [
            (r["name"], r["kind"]) for r in self.conn.read("mentions/episode_entities", scope=scope.key, id=episode_id)
        ]

    def known_names(self, scope: Scope, texts: Collection[str]) -> tuple[NamesRead, dict[str, bool]]:
        def work(tx: ManagedTransaction) -> tuple[NamesRead, dict[str, bool]]:
            row = run(tx, "mentions/names_version", key=names_key(scope))[0]  # first: see UnitStore.known_names
            return NamesRead(version=row["version"], last=row["last"]), known_names_in(tx, scope, texts)

        return self.conn.read_tx(work, what="known names")

    def earlier_texts(self, scope: Scope, anchors: Sequence[tuple[str, bool]]) -> TextsRead:
        def work(tx: ManagedTransaction) -> TextsRead:
            row = run(tx, "mentions/texts_version", key=names_key(scope))[0]  # first: see UnitStore.earlier_texts
            return texts_naming(tx, scope, anchors, row["version"], row["last"])

        return self.conn.read_tx(work, what="earlier texts")

    # -- usage and archive ------------------------------------------------------------------
    def record_recall(self, scope: Scope, stats: Mapping[str, RecallStats]) -> int:
        rows = [
            {"id": uid, "at": s.recalled_at, "n": s.increment, "archive": False, "archived_at": None}
            for uid, s in stats.items()
        ]
        return int(self.conn.write("store/note_usage", rows=rows, scope_props=scope_props(scope))[0]["updated"])

    def set_archived(self, scope: Scope, unit_ids: list[str], archived_at: datetime | None) -> int:
        """Archive (or restore, with None) units: their usage records it and their search
        entries leave (or rejoin) search, in one transaction."""

        def work(tx: ManagedTransaction) -> int:
            texts_changed(tx, [scope])
            rows = run(
                tx,
                "store/note_usage",
                scope_props=scope_props(scope),
                rows=[{"id": uid, "at": None, "n": 0, "archive": True, "archived_at": archived_at} for uid in unit_ids],
            )
            run(tx, "entries/set_searchable", ids=unit_ids, scope=scope.key, searchable=archived_at is None)
            return rows[0]["updated"] if rows else 0

        return self.conn.write_tx(work, what="archive")

    def archived_ids(self, scope: Scope) -> set[str]:
        return {r["id"] for r in self.conn.read("store/archived_ids", scope=scope.key)}
