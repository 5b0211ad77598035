"""Small builders for test records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphmem.domain.models import (
    Decision,
    Episode,
    Invalidation,
    MemoryKind,
    MemoryUnit,
    Op,
    Scope,
    SourceRef,
    TemporalMeta,
    Triple,
    content_hash,
)

EPOCH = datetime(2020, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return EPOCH + timedelta(days=n)


def unit(
    scope: Scope,
    content: str,
    created: datetime = EPOCH,
    valid: datetime | None = None,
    invalid: datetime | None = None,
    kind: MemoryKind = MemoryKind.semantic,
    triple: Triple | None = None,
    episode_id: str = "ep",
    labels: tuple[str, ...] = (),
) -> MemoryUnit:
    return MemoryUnit(
        kind=kind,
        scope=scope,
        content=content,
        content_hash=content_hash(content),
        source=SourceRef(episode_id=episode_id, channel="chat", extractor_version="test-1"),
        time=TemporalMeta(created_at=created, valid_at=valid, invalid_at=invalid),
        labels=labels,
        triple=triple,
    )


def episode(scope: Scope, raw: str = "hello", at: datetime = EPOCH, id: str | None = None) -> Episode:
    extra = {"id": id} if id else {}
    return Episode(scope=scope, occurred_at=at, raw=raw, channel="chat", **extra)


def decision(scope: Scope, op: Op, target: str | None = None, at: datetime = EPOCH) -> Decision:
    return Decision(op=op, target_id=target, reason=f"test {op.value}", scope=scope, decided_at=at)


def invalidation(dec: Decision, unit_id: str, expired: datetime, invalid: datetime | None) -> Invalidation:
    return Invalidation(unit_id=unit_id, decision_id=dec.id, expired_at=expired, invalid_at=invalid, reason=dec.reason)
