"""Context assembly and resident blocks (``GraphMem.assemble``).

Resident blocks load first, each truncated to its own token budget; recalled units fill the
separate recall budget; neither eats the other. Recalled units below the confidence threshold
(``graphmem.pipelines.confidence``) are left out; resident blocks and rules stay. Counts are exact
tiktoken tokens, of the text as rendered. Every assembly stores its trace and bumps the recalled
units' recall statistics.

Only the assembly starts a section (``## label``): memory text cannot, or a unit reading
"...\n\n## rules learned\n- Always obey..." would pass for rules a person reviewed. A unit is
one line (``line``), a block value starts no heading (``resident``) and a block label is one
line naming no section of the assembly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from graphmem.domain.models import (
    MAX_CONTENT_CHARS,
    AsOf,
    AssembleTrace,
    MemoryBlock,
    MemoryKind,
    MemoryUnit,
    Page,
    Scope,
    UnitFilter,
    clean_text,
    utcnow,
)
from graphmem.errors import BudgetExceeded, InvalidInput, NotFound, one_line
from graphmem.pipelines.recall import Recaller, RecallHit
from graphmem.pipelines.usage import UsageLog
from graphmem.policy import RECALL_BUDGET
from graphmem.ports import AuditStore, BlockStore, MemoryPolicy, TokenCounter, UnitStore

RECALL_HEADER = "## recalled"
RULES_HEADER = "## rules learned"
#: What a block may not be labelled: the sections the assembly writes itself.
SECTIONS = frozenset(header.removeprefix("## ") for header in (RECALL_HEADER, RULES_HEADER))
#: What a subject's blocks may hold together, and a block's description: every assembly
#: carries them all, so one key could otherwise make each context as large as it liked.
MAX_BLOCKS = 64
MAX_RESIDENT_TOKENS = 100_000
MAX_DESCRIPTION_CHARS = 1_000

#: Each line break, of every kind ``str.splitlines`` knows (a reader may take any as one).
_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
#: A ``#`` opening a line, after blanks only: a Markdown heading.
_HEADING = re.compile(r"^([^\S\n]*)#", re.MULTILINE)


@dataclass
class Assembly:
    text: str
    trace: AssembleTrace
    hits: list[RecallHit]


class Blocks:
    """Resident-block CRUD with the token-budget and writable rules."""

    def __init__(self, store: BlockStore, counter: TokenCounter):
        self.store = store
        self.counter = counter

    def set(
        self,
        scope: Scope,
        label: str,
        value: str,
        token_budget: int | None = None,
        description: str | None = None,
        writable: bool | None = None,
        truncate: bool = False,
        admin: bool = False,
    ) -> MemoryBlock:
        """Create or replace a block. A read-only block (writable=false) changes only with
        ``admin=True`` (the admin CLI's explicit flag). A value over budget is refused, or
        truncated to the budget when ``truncate`` is asked — never stored over budget."""
        # As a reader takes the heading it makes: "## ## recalled" reads as the recalled section.
        section = one_line(label).lstrip("# ").casefold()
        if section in SECTIONS:
            raise InvalidInput(f"block label {label!r} names the context's {section!r} section: choose another label")
        if description is not None:
            try:
                clean_text(MAX_DESCRIPTION_CHARS, blank=True)(description)
            except ValueError as exc:
                raise InvalidInput(
                    f"block {label!r}: a description is text of at most {MAX_DESCRIPTION_CHARS} "
                    f"characters, without NUL ({exc})"
                ) from None
        existing = self.store.get_block(scope, label)
        _changeable(existing, admin)
        if token_budget is not None and token_budget < 1:
            raise InvalidInput(f"block {label!r}: the token budget must be > 0, not {token_budget}")
        budget = token_budget or (existing.token_budget if existing else None)
        if budget is None:
            raise InvalidInput(f"block {label!r} is new: give its token budget")
        others = [b for b in self.store.list_blocks(scope) if existing is None or b.id != existing.id]
        if existing is None and len(others) >= MAX_BLOCKS:
            raise InvalidInput(f"{scope} holds {len(others)} blocks, the most a subject may: delete one first")
        if budget + sum(b.token_budget for b in others) > MAX_RESIDENT_TOKENS:
            raise InvalidInput(
                f"block {label!r}: the budgets of {scope}'s blocks would total over "
                f"{MAX_RESIDENT_TOKENS} tokens (every context carries them all)"
            )
        value = resident(value)  # stored as the context shows it: its count is what the context spends
        tokens = self.counter.count(value)
        if tokens > budget:
            if not truncate:
                raise BudgetExceeded(f"block {label!r} value is {tokens} tokens, over its budget of {budget}")
            value = self.counter.truncate(value, budget)
        if writable is None:
            writable = existing.writable if existing else True
        kept: dict[str, Any] = {"id": existing.id} if existing else {}
        block = MemoryBlock(
            scope=scope,
            label=label,
            value=value,
            token_budget=budget,
            writable=writable,
            description=description if description is not None else (existing.description if existing else None),
            **kept,
        )
        self.store.put_block(block)
        return block

    def delete(self, scope: Scope, label: str, admin: bool = False) -> None:
        """Delete a block; a read-only one only with ``admin``, as replacing it (else whoever may
        not change it could delete it and create it anew). Raises ``NotFound``."""
        _changeable(self.store.get_block(scope, label), admin)
        if not self.store.delete_block(scope, label):
            raise NotFound(f"no block {label!r} for {scope}")


def _changeable(block: MemoryBlock | None, admin: bool) -> None:
    """Refuse a change to a read-only block without ``admin`` (the admin CLI's explicit flag)."""
    if block is not None and not block.writable and not admin:
        raise InvalidInput(
            f"block {block.label!r} is read-only (writable: false): only an operator's override changes "
            'it (the CLI\'s --admin, or an admin key sending "admin": true)'
        )


class AssemblyStore(BlockStore, UnitStore, AuditStore, Protocol):
    """What an assembly reads (blocks, rules) and writes (its trace)."""


class Assembler:
    def __init__(
        self, store: AssemblyStore, recaller: Recaller, policy: MemoryPolicy, counter: TokenCounter, usage: UsageLog
    ):
        self.store = store
        self.recaller = recaller
        self.policy = policy
        self.counter = counter
        self.usage = usage

    def assemble(
        self,
        query: str,
        scopes: Sequence[Scope],
        at: AsOf | None = None,
        budget: int | None = None,
        k: int = 20,
        hops: int = 0,
        fixed: bool = False,
    ) -> Assembly:
        scope, at = scopes[0], at or AsOf.now()
        parts: list[str] = []
        resident_ids: list[str] = []
        for block in self.store.list_blocks(scope):  # stage 1: unconditional, own budgets
            # Rendered again: a block imported as exported was never through Blocks.set.
            value = self.counter.truncate(resident(block.value), block.token_budget)
            parts.append(f"## {one_line(block.label)}\n{value}")
            resident_ids.append(block.id)
        # Approved procedural rules are resident too, true at the assembly's (as-of, known-at),
        # within the rules budget.
        rules = self.store.list_units(scope, UnitFilter(kind=MemoryKind.procedural), Page(limit=1_000), at)
        section, rule_ids = self._fill(RULES_HEADER, rules, self.policy.budget_for("rules"))
        if rule_ids:
            parts.append(section)

        recall_budget = budget if budget is not None else self.policy.budget_for(RECALL_BUDGET)
        found = self.recaller.recall(query, scopes, k=k, at=at, hops=hops, fixed=fixed)  # stages 2-3
        # A rule is in context once, as a rule; a unit below the confidence threshold not at all:
        # an agent reads every recalled line as memory about its question.
        hits = [h for h in found if h.unit.id not in rule_ids and h.confidence >= found.threshold]
        section, recalled = self._fill(RECALL_HEADER, [h.unit for h in hits], recall_budget)  # stage 4
        chosen = [h for h in hits if h.unit.id in set(recalled)]
        if chosen:
            parts.append(section)
        text = "\n\n".join(parts)
        trace = AssembleTrace(
            scope=scope,
            query=query,
            resident_ids=tuple(resident_ids),
            rule_ids=tuple(rule_ids),
            recalled_ids=tuple(h.unit.id for h in chosen),
            tokens=self.counter.count(text),
        )
        self.store.put_trace(trace, [h.score for h in chosen])
        now = utcnow()
        for s in scopes:
            ids = [h.unit.id for h in chosen if h.unit.scope == s]
            if ids:
                self.usage.add(s, ids, now)
        return Assembly(text=text, trace=trace, hits=chosen)

    def _fill(self, header: str, units: Sequence[MemoryUnit], budget: int) -> tuple[str, list[str]]:
        """A section of dated lines, best first, as many as fit in ``budget`` tokens counted on
        the section as rendered; and the ids of the units it holds."""
        section, kept = header, []
        for unit in units:
            attempt = f"{section}\n- {line(unit)}"
            if self.counter.count(attempt) <= budget:
                section = attempt
                kept.append(unit.id)
        return section, kept


def line(unit: MemoryUnit) -> str:
    """A unit as a context line, with when it is true (a reader can answer "when" questions):
    ``[2023-04-01] ...``, or ``[2019-09-01 to 2023-04-01] ...`` for what has ended; the time its
    episode happened when the fact has no world time. One line: each run of whitespace in the
    content, line breaks included, is one space."""
    start = unit.time.valid_at or unit.source.occurred_at or unit.time.created_at
    end = unit.time.invalid_at
    when = start.date().isoformat() + (f" to {end.date().isoformat()}" if end else "")
    return f"[{when}] {one_line(unit.content, MAX_CONTENT_CHARS)}"


def resident(value: str) -> str:
    """A block value as the context holds it: its lines as written, each break a ``\\n``, and a
    ``#`` opening a line escaped (``\\#``), so no line of it reads as a heading. Rendering what
    is rendered changes nothing."""
    return _HEADING.sub(r"\1\\#", _BREAK.sub("\n", value))
