"""LLMPolicy: reconcile with a chat model behind any OpenAI-compatible endpoint.

The gate, archive rule and budgets are ``BasePolicy``'s; only ``reconcile`` asks the model. The
model's answer is checked before it becomes a decision: an unknown op, an UPDATE/DELETE naming
no target or a target that is not one of the neighbours shown, an empty reason, or a model
failure all become a NOOP whose reason says which. Exact duplicates never get here: the write
pipeline dedupes by content hash first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from graphmem.domain.models import Candidate, Decision, MemoryUnit, Op
from graphmem.errors import BackendError
from graphmem.llm.structured import structured
from graphmem.policy import BasePolicy, PolicyConfig

SCHEMA_NAME = "memory_decision"

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["op", "target_id", "reason", "confidence"],
    "properties": {
        "op": {"type": "string", "enum": [op.value for op in Op]},
        "target_id": {"type": ["string", "null"], "description": "id of the existing memory affected"},
        "reason": {"type": "string", "description": "one sentence: why"},
        "confidence": {"type": "number"},
    },
}

SYSTEM = """You maintain a long-term memory. Decide what to do with a new candidate memory \
given the existing memories most related to it. Choose one op:
- ADD: the candidate is new information (target_id null);
- UPDATE: the candidate replaces an existing memory that is no longer true, e.g. a new city \
for someone who moved (target_id = that memory's id);
- DELETE: the candidate says an existing memory is not true (any more) and adds nothing itself \
(target_id = that memory's id);
- NOOP: the candidate adds nothing (already known, or not worth remembering); target_id may \
name the existing memory that already says it, else null.
A candidate with op "retract" (it was never true) may only be DELETE or NOOP; one with op \
"end" (it stopped being true at invalid_at) only UPDATE or NOOP. target_id must be one of the ids shown. \
Always give a short reason and a confidence from 0 to 1."""

_MAX_REASON = 1_900


class _Answer(BaseModel):
    """Loose on purpose: the op, target and reason are checked by ``LLMPolicy`` so each
    problem gets its own NOOP reason instead of a retry."""

    model_config = ConfigDict(extra="ignore")

    op: str
    target_id: str | None = None
    reason: str = ""
    confidence: float = 1.0


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


def _clean(text: str) -> str:
    text = text.replace("\x00", "").strip()
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


class LLMPolicy(BasePolicy):
    """Reconcile by asking a model (see the module docstring)."""

    name = "llm"
    wants_semantic_neighbours = True

    def __init__(self, client: Any, model: str, config: PolicyConfig | None = None, attempts: int = 3) -> None:
        super().__init__(config)
        self.client = client
        self.model = model
        self.attempts = attempts

    def prompt(self, candidate: Candidate, neighbours: Sequence[MemoryUnit]) -> str:
        def when(t: datetime | None) -> str | None:
            return t.isoformat() if t else None

        return json.dumps(
            {
                "candidate": {
                    "content": candidate.content,
                    "kind": candidate.kind.value,
                    "valid_at": when(candidate.valid_at),
                    "op": candidate.op,
                    "invalid_at": when(candidate.invalid_at),
                    "triple": candidate.triple.model_dump(mode="json") if candidate.triple else None,
                },
                "existing_memories": [
                    {"id": n.id, "content": n.content, "valid_at": when(n.time.valid_at)} for n in neighbours
                ],
            },
            ensure_ascii=False,
        )

    def reconcile(self, candidate: Candidate, neighbours: Sequence[MemoryUnit]) -> Decision:
        def decide(op: Op, reason: str, target: str | None = None, confidence: float = 0.0, **extra: Any) -> Decision:
            return Decision(
                op=op,
                reason=_clean(reason) or f"LLM chose {op.value}",
                target_id=target,
                scope=candidate.scope,
                policy=self.name,
                confidence=_clamp(confidence),
                candidate=candidate.content,
                **extra,
            )

        try:
            data = structured(
                self.client,
                self.model,
                SYSTEM,
                self.prompt(candidate, neighbours),
                SCHEMA_NAME,
                DECISION_SCHEMA,
                attempts=self.attempts,
                validator=_Answer,
            )
        except BackendError as exc:
            return decide(Op.NOOP, f"LLM policy failed: {exc}")
        answer = _Answer.model_validate(data)
        confidence = _clamp(answer.confidence)
        raw_op = answer.op.strip().upper()
        if raw_op not in Op.__members__:
            return decide(Op.NOOP, f"LLM gave unknown op {answer.op!r}")
        op = Op[raw_op]
        reason = _clean(answer.reason)
        if not reason:
            return decide(Op.NOOP, f"LLM gave no reason for {op.value}")
        shown = {n.id for n in neighbours}
        target = (answer.target_id or "").strip() or None
        if op in (Op.UPDATE, Op.DELETE):
            if target is None:
                return decide(Op.NOOP, f"LLM chose {op.value} without a target; it said: {reason}")
            if target not in shown:
                return decide(Op.NOOP, f"LLM named target {target}, not one of the neighbours shown")
        elif target not in shown:
            target = None  # ADD/NOOP: a target is only a pointer for the audit; drop invented ones
        allowed = {"retract": (Op.DELETE, Op.NOOP), "end": (Op.UPDATE, Op.NOOP)}.get(candidate.op)
        if allowed and op not in allowed:
            return decide(
                Op.NOOP,
                f"LLM chose {op.value} for {'a retraction' if candidate.op == 'retract' else 'an ending'}; "
                f"it said: {reason}",
            )
        if op is Op.ADD:
            target = None  # an ADD with a target means "bounded by it" to the pipeline; the LLM sets no bound
        ends = candidate.invalid_at if candidate.op == "end" else candidate.valid_at
        extra = {"invalid_at": ends} if op is Op.UPDATE else {}
        return decide(op, reason, target, confidence, **extra)
