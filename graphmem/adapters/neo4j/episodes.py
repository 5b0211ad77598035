"""``EpisodeStore`` on Neo4j: append-only episodes, stored ``Undecided`` until the commit that
decides them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import Neo4jConnection, run
from graphmem.adapters.neo4j.rows import episode_from_props, episode_row, scope_of, wire
from graphmem.domain.models import Appended, Episode, Page, Scope, utcnow


def store_episodes(tx: ManagedTransaction, episodes: Sequence[Episode], undecided: bool) -> Appended:
    """Append episodes under their (scope, id) in ``tx``; those whose id their scope holds
    with other content are reported, not stored."""
    rows = [episode_row(e) for e in episodes]
    found = run(tx, "store/put_episodes", rows=rows, stored_at=wire(utcnow()), undecided=undecided)
    conflicts = tuple(r["position"] for r in found if r["fingerprint"] != rows[r["position"]]["props"]["fingerprint"])
    new = {(episodes[r["position"]].scope, episodes[r["position"]].id) for r in found if r["created"]}
    return Appended(new=len(new), conflicts=conflicts)


class Neo4jEpisodes:
    """``graphmem.ports.EpisodeStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    def put_episodes(self, episodes: Sequence[Episode]) -> Appended:
        """Append episodes in one transaction under their (scope, id); those whose id their
        scope holds with other content are reported, not stored."""
        return self.conn.write_tx(lambda tx: store_episodes(tx, episodes, undecided=True), what="put episodes")

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        rows = self.conn.read("store/get_episode", id=episode_id, scope=scope.key)
        if not rows:
            return None
        return episode_from_props(rows[0]["episode"], scope, rows[0]["derived_ids"])

    def list_episode_ids(self, scope: Scope, page: Page = Page()) -> list[str]:
        rows = self.conn.read("store/list_episodes", scope=scope.key, offset=page.offset, limit=page.limit)
        return [r["id"] for r in rows]

    def processed_episodes(self, scope: Scope, ids: Iterable[str]) -> set[str]:
        rows = self.conn.read("store/processed_episodes", ids=list(ids), scope=scope.key)
        return {r["id"] for r in rows}

    def undecided_episodes(self, scope: Scope | None = None, limit: int = 100) -> list[list[Episode]]:
        rows = self.conn.read("store/undecided_episodes", scope=scope.key if scope else None, limit=limit)
        return [[episode_from_props(e, scope_of(e)) for e in r["episodes"]] for r in rows]

    def undecided_count(self, scopes: Sequence[Scope] | None = None) -> int:
        if scopes is None:
            return int(self.conn.read("store/undecided_total")[0]["n"])
        return int(self.conn.read("store/undecided_count", scopes=[s.key for s in scopes])[0]["n"])
