"""Property: assembly never exceeds a block's own budget nor the recall budget, counted with
tiktoken, and the two never eat each other; every assembly stores its trace."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.adapters.tokens import TiktokenCounter
from graphmem.domain.models import Fact, MemoryKind, UnitFilter
from graphmem.embed import HashingEmbedder
from graphmem.pipelines.assemble import RECALL_HEADER, RULES_HEADER, line
from graphmem.policy import PolicyConfig
from graphmem.policy.rule import RulePolicy
from tests.conftest import fresh_scope
from tests.examples import examples

counter = TiktokenCounter()
text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=300
).filter(str.strip)


@settings(max_examples=examples(60), deadline=None)
@given(
    blocks=st.lists(st.tuples(text, st.integers(1, 40)), max_size=3),
    facts=st.lists(text, max_size=8),
    rules=st.lists(text, max_size=4),
    recall_budget=st.integers(1, 120),
    rules_budget=st.integers(1, 60),
)
def test_budgets_are_never_exceeded(blocks, facts, rules, recall_budget, rules_budget):
    store = InMemoryStore()
    mem = GraphMem(
        store, InMemoryIndex(store, HashingEmbedder()), policy=RulePolicy(PolicyConfig(budgets={"rules": rules_budget}))
    )
    scope = fresh_scope()
    for rule in rules:  # approved procedural rules are assembled within the rules budget
        held = mem.remember(
            rule, scope, facts=[Fact(subject="assistant", predicate="rule", content=rule, kind=MemoryKind.procedural)]
        )
        for review_id in held.reviews:
            mem.review(review_id, approve=True)
    for i, (value, budget) in enumerate(blocks):
        mem.blocks.set(scope, f"block{i}", value, token_budget=budget, truncate=True)
    for fact in facts:
        mem.remember(fact, scope, extractor="none")
    result = mem.assemble("anything at all", scope, budget=recall_budget)

    sections = result.text.split("\n\n") if result.text else []
    by_label = {b.label: b for b in store.list_blocks(scope)}
    recalled = [s for s in sections if s.startswith(RECALL_HEADER)]
    assert len(recalled) <= 1
    if recalled:
        assert counter.count(recalled[0]) <= recall_budget
    learned = [s for s in sections if s.startswith(RULES_HEADER)]
    if learned:
        assert counter.count(learned[0]) <= rules_budget
    approved = store.list_units(scope, UnitFilter(kind=MemoryKind.procedural))
    assert set(result.trace.rule_ids) <= {u.id for u in approved}
    if any(counter.count(f"{RULES_HEADER}\n- {line(u)}") <= rules_budget for u in approved):
        assert result.trace.rule_ids  # a rule that fits is loaded
    for block in by_label.values():
        assert counter.count(block.value) <= block.token_budget  # stored within budget
        assert f"## {block.label}\n{block.value}" in result.text  # loaded whole, recall did not eat it
    assert set(result.trace.resident_ids) == {b.id for b in by_label.values()}
    assert store.get_trace(result.trace.id, scope) == result.trace
    assert result.trace.tokens == counter.count(result.text)
