"""The JSON shapes graphmem shows the world: one function per shape, shared by the CLI's
``--json``, the MCP tools and any other face, so a thing looks the same wherever it is read.
A stored record is shown in its JSON form, the export's (``graphmem.pipelines.shapes``, through
the facade): times ISO 8601 UTC at full precision, a scope as ``scope`` and ``project``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from graphmem.api import shapes
from graphmem.domain.models import ApiKey, Decision, MemoryBlock, Op, Scope

if TYPE_CHECKING:
    from graphmem.domain.timewords import TimeWindow
    from graphmem.pipelines.assemble import Assembly
    from graphmem.pipelines.recall import Recalled, RecallHit
    from graphmem.pipelines.write import WriteReport

# A stored record as the export writes it: the same wherever it is read.
time, scope, unit, episode, review, trace = (
    shapes.time,
    shapes.scope,
    shapes.unit,
    shapes.episode,
    shapes.review,
    shapes.trace,
)
usage_record = shapes.usage
_plain, _scoped = shapes.plain, shapes.scoped


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
    if (named := getattr(hits, "window", None)) is not None:
        out["window"] = window(named)
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
