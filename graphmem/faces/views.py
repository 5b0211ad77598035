"""The JSON shapes graphmem shows the world: one function per shape, shared by the CLI's
``--json``, the MCP tools and any other face, so a thing looks the same wherever it is read.

- Times are ISO 8601 in UTC with the offset written ``+00:00``, at full precision: a known-at
  replay or an export must give back the exact instant. Absent times are ``null``.
- A scope is its ``TYPE:ID`` string under ``"scope"``, with its project under ``"project"``.
- Enums are their values; tuples are lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from graphmem.domain.models import (
    ApiKey,
    AssembleTrace,
    Candidate,
    Decision,
    Deletion,
    Entity,
    Episode,
    Invalidation,
    MemoryBlock,
    MemoryUnit,
    Op,
    ReviewItem,
    Scope,
    Usage,
)

if TYPE_CHECKING:
    from graphmem.domain.timewords import TimeWindow
    from graphmem.pipelines.assemble import Assembly
    from graphmem.pipelines.recall import Recalled, RecallHit
    from graphmem.pipelines.write import WriteReport


def time(value: datetime | None) -> str | None:
    """An instant as ISO 8601 UTC (``2023-05-08T13:56:00.123456+00:00``), or None."""
    return value.astimezone(UTC).isoformat() if value is not None else None


def scope(value: Scope) -> dict[str, str | None]:
    """``{"scope": "TYPE:ID", "project": id or None}``."""
    return {"scope": f"{value.subject_type.value}:{value.subject_id}", "project": value.project_id}


def _plain(value: Any) -> Any:
    """Python-mode model dumps to JSON values: times through ``time``, enums to values."""
    if isinstance(value, datetime):
        return time(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _scoped(model: Any, **extra: Any) -> dict[str, Any]:
    """A model's fields with its scope written as ``scope``/``project``."""
    return {**_plain(model.model_dump(exclude={"scope"})), **scope(model.scope), **extra}


def unit(value: MemoryUnit) -> dict[str, Any]:
    """A memory unit with its source, both time axes and its triple."""
    return _scoped(value)


def hit(value: RecallHit) -> dict[str, Any]:
    """One recall hit (``recall --json``): the unit flattened, its fused score, hop, path,
    similarity with the question (null when fusion did not read it) and confidence (0..1, how
    likely it is what the question asks about: ``graphmem.pipelines.confidence``)."""
    u, t = value.unit, value.unit.time
    return {
        "id": u.id,
        "content": u.content,
        "kind": u.kind.value,
        "score": value.score,
        "episode_id": u.source.episode_id,
        "valid_at": time(t.valid_at),
        "invalid_at": time(t.invalid_at),
        "created_at": time(t.created_at),
        "expired_at": time(t.expired_at),
        "hop": value.hop,
        "path": list(value.path),
        "similarity": value.similarity,
        "confidence": value.confidence,
        **scope(u.scope),
    }


def window(value: TimeWindow) -> dict[str, Any]:
    """The time a question named, as recall understood it: [from, to) and the words."""
    return {"from": time(value.start), "to": time(value.end), "text": value.text}


def confident(hits: Recalled, min_confidence: float | None = None) -> list[RecallHit]:
    """The hits whose confidence, as a percentage, is at least ``min_confidence`` (all without one)."""
    return [h for h in hits if min_confidence is None or 100 * h.confidence >= min_confidence]


def recall(hits: Recalled, min_confidence: float | None = None) -> dict[str, Any]:
    """What ``recall --json`` prints (and the HTTP API and MCP answer): whether anything
    relevant was found (``relevant``: a hit's confidence reached the threshold), the hits, best
    first, each with its confidence, the time window the question named when it named one, and
    ``incomplete`` when episodes of the subject are stored undecided (how many:
    ``Recalled.incomplete``)."""
    out: dict[str, Any] = {"relevant": hits.relevant, "hits": [hit(h) for h in confident(hits, min_confidence)]}
    if getattr(hits, "window", None) is not None:
        out["window"] = window(hits.window)
    if getattr(hits, "incomplete", 0):
        out["incomplete"] = hits.incomplete
    return out


def write_report(report: WriteReport) -> dict[str, Any]:
    """What a write did: every op counted (0 included), units written, extraction failures,
    review items held."""
    return {
        "episodes": report.episodes,
        "new_episodes": report.new_episodes,
        "decisions": {op.value: report.decisions.get(op.value, 0) for op in Op},
        "unit_ids": list(report.unit_ids),
        "extraction_failed": [{"episode_id": e, "error": r} for e, r in report.failed],
        "reviews": list(report.reviews),
    }


def ingest(report: WriteReport, episodes: int, failed: list[dict[str, Any]]) -> dict[str, Any]:
    """What an ingest did (``ingest --json``, ``POST .../episodes``): ``write_report`` with the
    episodes stored and the items that failed, each named by where it was (``line`` in a
    file, ``index`` in a request) with its error."""
    return {**write_report(report), "episodes": episodes, "failed": failed}


def decision(value: Decision, texts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One decision of the log, with its reason; ``event`` says what it put into its timeline
    (kind, group, value, world interval, order) without repeating the candidate. With the
    texts of units (``GraphMem.fact_texts``): ``produced_fact`` and ``target_fact``, the facts
    it wrote and ended, retracted or superseded."""
    event = value.event
    named = (
        {}
        if texts is None
        else {"produced_fact": texts.get(value.produced_id or ""), "target_fact": texts.get(value.target_id or "")}
    )
    return _scoped(
        value,
        **named,
        event=None
        if event is None
        else {
            **_plain(event.model_dump(exclude={"candidate", "order_at", "order_ep", "order_fact"})),
            "order": [time(event.order_at), event.order_ep, event.order_fact],
        },
    )


def decision_log(found: Sequence[Decision], texts: Mapping[str, str]) -> list[dict[str, Any]]:
    """Rows of a decision log (every face's), each naming its facts."""
    return [decision(d, texts) for d in found]


def history_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One entry of ``GraphMem.history``: a unit on both time axes, the slot it fills, whether
    it is still believed (``believed_until`` when not; ``earlier``: the world ends it was
    believed to have before), its raw edges (``expired_at``: the first of them) and decisions."""
    u, t = entry["unit"], entry["unit"].time
    return {
        "id": u.id,
        "content": u.content,
        "kind": u.kind.value,
        "slot": entry["slot"],
        "valid_at": time(t.valid_at),
        "invalid_at": time(t.invalid_at),
        "created_at": time(t.created_at),
        "expired_at": time(t.expired_at),
        "believed": entry["believed_until"] is None,
        "believed_until": time(entry["believed_until"]),
        "earlier": [{"until": time(e["until"]), "invalid_at": time(e["invalid_at"])} for e in entry["earlier"]],
        "edges": [
            {"expired_at": time(e.expired_at), "invalid_at": time(e.invalid_at), "decision_id": e.decision_id}
            for e in entry["edges"]
        ],
        "episode_id": u.source.episode_id,
        "decisions": [decision(d) for d in entry["decisions"]],
        **scope(u.scope),
    }


def episode(value: Episode) -> dict[str, Any]:
    """An episode with its structured facts (the ingest line's fields)."""
    return _scoped(value)


def explanation(info: Mapping[str, Any]) -> dict[str, Any]:
    """``GraphMem.explain``: the unit, its episode, extractor version, decisions, the
    invalidation edges into it (``incoming``) and out of its decision (``outgoing``), and the
    entities it is about or names, with how (``entities``), and those its episode names
    (``episode_entities``)."""
    u, ep = info["unit"], info["episode"]
    return {
        "unit": unit(u),
        "episode": episode(ep) if ep is not None else None,
        "extractor_version": u.source.extractor_version,
        "decisions": [decision(d) for d in info["decisions"]],
        "incoming": _plain(info.get("incoming", [])),
        "outgoing": _plain(info.get("outgoing", [])),
        "entities": [{"name": name, "how": how} for name, how in info.get("entities", [])],
        "episode_entities": [{"name": name, "how": how} for name, how in info.get("episode_entities", [])],
    }


def trace(value: AssembleTrace) -> dict[str, Any]:
    """A stored assembly trace: what it loaded and recalled, and its token count (and the
    score of each recalled unit, from a ``StoredTrace``)."""
    return _scoped(value)


def assembly(value: Assembly) -> dict[str, Any]:
    """``assemble --json``: the context text and its trace."""
    return {"text": value.text, "trace": trace(value.trace)}


def stored_trace(info: Mapping[str, Any]) -> dict[str, Any]:
    """``GraphMem.trace``: a trace with the blocks it loaded and the units it recalled."""
    return {
        "trace": trace(info["trace"]),
        "resident": [block(b) for b in info["resident"]],
        "recalled": [unit(u) for u in info["recalled"]],
    }


def block(value: MemoryBlock, tokens: int | None = None) -> dict[str, Any]:
    """A resident block; ``tokens`` (its value's count) when the caller has it."""
    return _scoped(value, **({"tokens": tokens} if tokens is not None else {}))


def _candidate(value: Candidate) -> dict[str, Any]:
    """A candidate inside a record of the same scope: without the repeated scope."""
    return _plain(value.model_dump(exclude={"scope"}))


def review(value: ReviewItem) -> dict[str, Any]:
    """A candidate held for review (its candidate without the repeated scope)."""
    return _scoped(value, candidate=_candidate(value.candidate))


def usage_record(value: Usage) -> dict[str, Any]:
    """A unit's recall statistics and archive state."""
    return _scoped(value)


def subject(value: Scope, counts: Mapping[str, int]) -> dict[str, Any]:
    """A subject (scope and project) with counts of what it holds."""
    return {**scope(value), **counts}


def whoami(value: ApiKey | None) -> dict[str, Any]:
    """Who a request is (``GET /v1/me``): its key, or null on a server run without keys."""
    return {"key": key(value) if value is not None else None}


def key(value: ApiKey, token: str | None = None) -> dict[str, Any]:
    """An API key without its digest; ``key`` (the token itself) only when it was just made."""
    shown = _plain(value.model_dump(exclude={"digest"}))
    return {"id": value.id, **({"key": token} if token is not None else {}), **shown}


# -- the export format: one record per line, ``{"type": ..., ...}`` ---------------------------
def export_header(value: Scope, exported_at: datetime, format_name: str, version: int) -> dict[str, Any]:
    """The first line of an export: what it is and whose records follow."""
    return {
        "type": "header",
        "format": format_name,
        "version": version,
        **scope(value),
        "exported_at": time(exported_at),
    }


def entity_record(value: Entity) -> dict[str, Any]:
    """An entity: its id, name as first written, normalised name and when it was first named."""
    return _scoped(value)


def decision_record(value: Decision) -> dict[str, Any]:
    """A decision whole: ``decision`` with its timeline event's candidate and order as stored."""
    event = value.event
    return _scoped(
        value,
        event=None
        if event is None
        else {
            **_plain(event.model_dump(exclude={"candidate"})),
            "candidate": None if event.candidate is None else _candidate(event.candidate),
        },
    )


def invalidation_record(value: Invalidation) -> dict[str, Any]:
    """An invalidation edge: the unit, the decision it hangs from, both times and the reason."""
    return _plain(value.model_dump())


def deletion_record(value: Deletion) -> dict[str, Any]:
    """The content-free record of an episode deletion."""
    return _scoped(value)
