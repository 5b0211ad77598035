"""``AuditStore`` and ``ReviewStore`` on Neo4j: decisions with their reasons, invalidation
edges, assembly traces, and the human review queue."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.rows import decision_from_props, native, review_from_props, trace_params
from graphmem.domain.models import AssembleTrace, Decision, ReviewItem, Scope, UnitEdges, utcnow

#: Traces deleted per transaction when pruning: bounds one transaction's size.
TRACE_BATCH = 1_000


class Neo4jAudit:
    """``graphmem.ports.AuditStore`` and ``ReviewStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    # -- audit ------------------------------------------------------------------------------
    def list_decisions(
        self,
        scope: Scope,
        episode_id: str | None = None,
        op: str | None = None,
        unit_id: str | None = None,
        limit: int = 100,
        unit_ids: Sequence[str] | None = None,
    ) -> list[Decision]:
        if unit_id is not None or unit_ids is not None:
            ids = sorted({i for i in (unit_id, *(unit_ids or ())) if i is not None})
            rows = self.conn.read("audit/unit_decisions", scope=scope.key, unit_ids=ids)
            found = [decision_from_props(r["decision"], scope) for r in rows]
            return [
                d
                for d in found
                if (episode_id is None or d.episode_id == episode_id) and (op is None or d.op.value == op)
            ][:limit]
        rows = self.conn.read("audit/list_decisions", scope=scope.key, episode_id=episode_id, op=op, limit=limit)
        return [decision_from_props(r["decision"], scope) for r in rows]

    def invalidations(self, unit_id: str, scope: Scope) -> UnitEdges:
        rows = self.conn.read("audit/invalidations", id=unit_id, scope=scope.key)
        return UnitEdges.model_validate(native(rows[0])) if rows else UnitEdges()

    def put_trace(self, trace: AssembleTrace, scores: Sequence[float] = ()) -> None:
        self.conn.write("audit/put_traces", rows=[trace_params(trace, scores)], scope=trace.scope.key)

    def get_trace(self, trace_id: str, scope: Scope) -> AssembleTrace | None:
        rows = self.conn.read("audit/get_trace", id=trace_id, scope=scope.key)
        if not rows:
            return None
        t = native(rows[0]["trace"])
        fields = {k: t[k] for k in ("id", "query", "resident_ids", "recalled_ids", "tokens", "created_at")}
        fields["rule_ids"] = t.get("rule_ids") or ()
        return AssembleTrace(scope=scope, **fields)

    def prune_traces(self, scope: Scope | None, before: datetime, dry_run: bool = False) -> int:
        key = scope.key if scope else None
        if dry_run:
            return int(self.conn.read("audit/count_traces", scope=key, before=before)[0]["traces"])
        pruned = 0
        while deleted := self.conn.write("audit/prune_traces", scope=key, before=before, batch=TRACE_BATCH)[0][
            "deleted"
        ]:
            pruned += deleted
        return pruned

    # -- review queue -----------------------------------------------------------------------
    def list_reviews(
        self, scope: Scope | None = None, status: str | None = "pending", limit: int = 100
    ) -> list[ReviewItem]:
        rows = self.conn.read("review/list_reviews", scope=scope.key if scope else None, status=status, limit=limit)
        return [review_from_props(r["review"]) for r in rows]

    def get_review(self, review_id: str) -> ReviewItem | None:
        rows = self.conn.read("review/get_review", id=review_id)
        return review_from_props(rows[0]["review"]) if rows else None

    def decide_review(self, review_id: str, status: str, note: str | None = None) -> bool:
        return bool(
            self.conn.write("review/decide_review", id=review_id, status=status, decided_at=utcnow(), note=note)
        )
