"""Context assembly (seed §3 assembleContext) and resident blocks.

Resident blocks load first, each truncated to its own token budget; recalled units fill the
separate recall budget; neither eats the other. Counts are exact tiktoken tokens. Every
assembly stores its trace and bumps the recalled units' recall statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import BudgetExceeded, InvalidInput
from ..models import AsOf, AssembleTrace, MemoryBlock, Scope, utcnow
from ..policy import RECALL_BUDGET
from ..ports import MemoryPolicy, TokenCounter
from .recall import Recaller, RecallHit

RECALL_HEADER = "## recalled"


@dataclass
class Assembly:
    text: str
    trace: AssembleTrace
    hits: list[RecallHit]


class Blocks:
    """Resident-block CRUD with the token-budget and writable rules."""

    def __init__(self, store, counter: TokenCounter):
        self.store = store
        self.counter = counter

    def set(
        self, scope: Scope, label: str, value: str, token_budget: int | None = None,
        description: str | None = None, writable: bool | None = None, truncate: bool = False,
        admin: bool = False,
    ) -> MemoryBlock:
        """Create or replace a block. A read-only block (writable=false) changes only with
        ``admin=True`` (the admin CLI's explicit flag). A value over budget is refused, or
        truncated to the budget when ``truncate`` is asked — never stored over budget."""
        existing = self.store.get_block(scope, label)
        if existing is not None and not existing.writable and not admin:
            raise InvalidInput(f"block {label!r} is read-only (writable: false); an operator can override with --admin")
        budget = token_budget or (existing.token_budget if existing else None)
        if budget is None:
            raise InvalidInput(f"block {label!r} is new: give its token budget")
        tokens = self.counter.count(value)
        if tokens > budget:
            if not truncate:
                raise BudgetExceeded(f"block {label!r} value is {tokens} tokens, over its budget of {budget}")
            value = self.counter.truncate(value, budget)
        if writable is None:
            writable = existing.writable if existing else True
        block = MemoryBlock(
            scope=scope, label=label, value=value, token_budget=budget, writable=writable,
            description=description if description is not None else (existing.description if existing else None),
            **({"id": existing.id} if existing else {}),
        )
        self.store.put_block(block)
        return block


class Assembler:
    def __init__(self, store, recaller: Recaller, policy: MemoryPolicy, counter: TokenCounter, usage):
        self.store = store
        self.recaller = recaller
        self.policy = policy
        self.counter = counter
        self.usage = usage

    def assemble(
        self, query: str, scopes: Sequence[Scope], at: AsOf | None = None, budget: int | None = None,
        k: int = 20, hops: int = 0, fixed: bool = False,
    ) -> Assembly:
        scope = scopes[0]
        parts: list[str] = []
        resident_ids: list[str] = []
        for block in self.store.list_blocks(scope):  # stage 1: unconditional, own budgets
            value = self.counter.truncate(block.value, block.token_budget)
            parts.append(f"## {block.label}\n{value}")
            resident_ids.append(block.id)

        recall_budget = budget if budget is not None else self.policy.budget_for(RECALL_BUDGET)
        hits = self.recaller.recall(query, scopes, k=k, at=at, hops=hops, fixed=fixed)  # stages 2-3
        section, chosen = RECALL_HEADER, []
        for hit in hits:  # stage 4: the recall budget, counted on the section as rendered
            attempt = f"{section}\n- {hit.unit.content}"
            if self.counter.count(attempt) <= recall_budget:
                section = attempt
                chosen.append(hit)
        if chosen:
            parts.append(section)
        text = "\n\n".join(parts)
        trace = AssembleTrace(
            scope=scope, query=query, resident_ids=tuple(resident_ids),
            recalled_ids=tuple(h.unit.id for h in chosen), tokens=self.counter.count(text),
        )
        self.store.put_trace(trace, [h.score for h in chosen])
        now = utcnow()
        for s in scopes:
            ids = [h.unit.id for h in chosen if h.unit.scope == s]
            if ids:
                self.usage.add(s, ids, now)
        return Assembly(text=text, trace=trace, hits=chosen)
