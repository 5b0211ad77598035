"""The facade methods the faces use instead of the store, on every adapter family: blocks,
the decision log, episode listing, and the operator calls where a database exists."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.api import MAX_BATCH, MAX_BUDGET, MAX_OFFSET
from graphmem.domain.models import Episode, Fact, Op
from graphmem.errors import ConfigurationError, Conflict, InvalidInput, NotFound
from tests.conftest import fresh_scope
from tests.factories import EPOCH


def test_blocks_through_the_facade(mem):
    scope, other = fresh_scope(), fresh_scope()
    with pytest.raises(InvalidInput, match="give its token budget"):
        mem.set_block(scope, "persona", "Be brief.")
    made = mem.set_block(scope, "persona", "Be brief.", token_budget=10, writable=False)
    assert mem.get_block(scope, "persona") == made and mem.list_blocks(scope) == [made]
    assert mem.list_blocks(other) == []
    with pytest.raises(NotFound):
        mem.get_block(other, "persona")
    with pytest.raises(InvalidInput, match="read-only"):
        mem.set_block(scope, "persona", "Be verbose.")
    assert mem.set_block(scope, "persona", "Be verbose.", admin=True).value == "Be verbose."
    # Deleting is replacing by another means: without admin, a read-only block stays as it is.
    with pytest.raises(InvalidInput, match="block 'persona' is read-only"):
        mem.delete_block(scope, "persona")
    assert mem.get_block(scope, "persona").value == "Be verbose."
    mem.delete_block(scope, "persona", admin=True)
    assert mem.list_blocks(scope) == []
    mem.set_block(scope, "notes", "x", token_budget=5)
    mem.delete_block(scope, "notes")  # a writable block needs no admin
    assert mem.list_blocks(scope) == []
    with pytest.raises(NotFound, match="no block 'persona'"):
        mem.delete_block(scope, "persona")
    assert mem.count_tokens("Be brief.") == 3


def test_a_subjects_blocks_are_bounded_together(mem):
    # every context carries all of a subject's blocks: their number and budgets have a ceiling
    from graphmem.pipelines.assemble import MAX_BLOCKS, MAX_DESCRIPTION_CHARS, MAX_RESIDENT_TOKENS

    scope = fresh_scope()
    mem.set_block(scope, "big", "x", token_budget=MAX_RESIDENT_TOKENS - MAX_BLOCKS)
    for n in range(MAX_BLOCKS - 1):
        mem.set_block(scope, f"b{n}", "x", token_budget=1)
    with pytest.raises(InvalidInput, match="blocks, the most a subject may"):
        mem.set_block(scope, "one more", "x", token_budget=1)
    with pytest.raises(InvalidInput, match=f"would total over {MAX_RESIDENT_TOKENS} tokens"):
        mem.set_block(scope, "b0", "x", token_budget=3)
    mem.set_block(scope, "b0", "y", token_budget=2)  # replacing within the ceiling is fine
    for description in ("a\x00b", "d" * (MAX_DESCRIPTION_CHARS + 1)):
        with pytest.raises(InvalidInput, match="description is text of at most"):
            mem.set_block(scope, "b1", "x", description=description)


def test_decisions_and_episodes_through_the_facade(mem):
    scope = fresh_scope()
    ids = [f"e{n}" for n in range(3)]  # episode ids belong to their subject
    for n, city in enumerate(["Paris", "Berlin", "Rome"]):
        fact = Fact(
            subject="Alice", predicate="lives_in", object=city, single_valued=True, valid_at=EPOCH + timedelta(days=n)
        )
        mem.remember(f"I live in {city}.", scope, facts=[fact], at=EPOCH + timedelta(days=n), episode_id=ids[n])
    log = mem.decisions(scope)
    assert sorted(d.op.value for d in log) == ["ADD", "UPDATE", "UPDATE"]
    assert [d.op for d in mem.decisions(scope, op="update")] == [Op.UPDATE, Op.UPDATE]
    assert [d.episode_id for d in mem.decisions(scope, episode_id=ids[0])] == [ids[0]]
    assert len(mem.decisions(scope, limit=1)) == 1
    with pytest.raises(InvalidInput, match="unknown op 'MERGE'"):
        mem.decisions(scope, op="MERGE")
    assert mem.decisions(fresh_scope()) == []

    every = mem.episodes(scope)
    assert sorted(e.id for e in every) == ids
    assert mem.episodes(scope, offset=1, limit=1) == every[1:2]
    assert mem.episode(ids[1], scope).raw == "I live in Berlin."
    with pytest.raises(NotFound):
        mem.episode(ids[1], fresh_scope())
    with pytest.raises(InvalidInput):
        mem.episodes(scope, limit=0)


def test_counts_beyond_any_real_use_are_bad_input_not_an_overflow(mem):
    """Offsets, batches and budgets past their bounds (a 64-bit overflow in Neo4j) are one line."""
    scope = fresh_scope()
    mem.remember("I like tea.", scope)
    assert mem.episodes(scope, offset=MAX_OFFSET) == []  # the bound itself is a page like any other
    for offset in (MAX_OFFSET + 1, 2**63 - 1, 10**30):
        with pytest.raises(InvalidInput, match=f"offset must be between 0 and {MAX_OFFSET}"):
            mem.episodes(scope, offset=offset)
    for call in (
        lambda: mem.forget(scope, batch=10**30),
        lambda: mem.forget(scope, batch=0),
        lambda: mem.ingest([], batch=MAX_BATCH + 1),
    ):
        with pytest.raises(InvalidInput, match=f"batch must be between 1 and {MAX_BATCH}"):
            call()
    with pytest.raises(InvalidInput, match=f"budget must be between 0 and {MAX_BUDGET}"):
        mem.assemble("tea", scope, budget=10**30)
    assert [e.raw for e in mem.episodes(scope)] == ["I like tea."]  # the refused forget erased nothing


def test_a_reused_episode_id_is_refused_alone(mem):
    scope, other = fresh_scope(), fresh_scope()
    mem.remember("I like tea.", scope, episode_id="e1", at=EPOCH)
    mem.remember("I like chess.", other, episode_id="e1", at=EPOCH)  # another subject's e1
    with pytest.raises(Conflict, match="episode e1 already exists with different content"):
        mem.remember("I like coffee.", scope, episode_id="e1", at=EPOCH)
    batch = [
        Episode(id="e2", scope=scope, occurred_at=EPOCH, raw="I like jazz."),
        Episode(id="e1", scope=scope, occurred_at=EPOCH, raw="I like coffee."),
        Episode(id="e3", scope=other, occurred_at=EPOCH, raw="I like sailing."),
        Episode(id="e1", scope=other, occurred_at=EPOCH, raw="I like chess."),
    ]  # the same: no conflict
    report = mem.ingest(batch)
    assert [position for position, _ in report.rejected] == [1] and report.episodes == 3
    assert "another" not in report.rejected[0][1] and "chess" not in report.rejected[0][1]
    assert sorted(e.raw for e in mem.episodes(scope)) == ["I like jazz.", "I like tea."]
    assert sorted(e.raw for e in mem.episodes(other)) == ["I like chess.", "I like sailing."]
    assert sorted(h.unit.content for h in mem.recall("what do I like", scope, k=10)) == ["I like jazz.", "I like tea."]


def test_every_spelling_of_a_subject_is_one_subject(mem):
    name = fresh_scope().subject_id
    mem.remember("I like tea.", f"user:Jose\u0301-{name}")  # NFD
    mem.remember("I like chess.", f"user: Jos\u00e9-{name}\t")  # NFC, with whitespace around
    found = mem.recall("what do I like", f"user:Jos\u00e9-{name}", k=10)
    assert sorted(h.unit.content for h in found) == ["I like chess.", "I like tea."]
    assert {str(h.unit.scope) for h in found} == {f"user:Jos\u00e9-{name}"}
    with pytest.raises(InvalidInput, match="U\\+200B"):
        mem.recall("what do I like", f"user:Jos\u00e9\u200b-{name}")  # a look-alike is refused, not a new subject
    for invisible in ("\u2028", "\ufe0f", "\u3164"):  # a line separator, a variation selector, a filler
        with pytest.raises(InvalidInput, match=f"U\\+{ord(invisible):04X}"):
            mem.remember("I like tea.", f"user:Jos\u00e9{invisible}-{name}")
    mem.forget(f"user:Jose\u0301-{name} ")
    assert mem.recall("what do I like", f"user:Jos\u00e9-{name}", k=10) == []


def test_operator_calls(mem):
    if mem.database is None:
        for call in (mem.init, mem.stats, mem.index_status):
            with pytest.raises(ConfigurationError, match="no database"):
                call()
        assert [c["check"] for c in mem.doctor()["checks"]] == ["database", "episodes", "embedder", "tokenizer"]
    else:
        assert mem.init()["applied"] == []  # the conn fixture migrated already
        report = mem.doctor()
        assert report["ok"], report
        stats = mem.stats()
        assert {
            "units",
            "searchable_units",
            "entries",
            "entities",
            "model",
            "dimension",
            "generation",
            "building",
            "migrations",
        } == set(stats)
    scope = fresh_scope()
    mem.remember("Alice plays the cello.", scope)
    rebuilt = mem.rebuild_index(scope)
    assert rebuilt == {"units": 1, "model": mem.index.embedder.name, "dimension": mem.index.embedder.dimension}
    assert [h.unit.content for h in mem.recall("cello", scope)] == ["Alice plays the cello."]


def test_an_approved_rule_is_in_context_once_and_only_where_it_is_visible(mem):
    scope = fresh_scope()
    held = mem.remember(
        "Answer in French.",
        scope,
        at=EPOCH,
        facts=[Fact(subject="assistant", predicate="rule", content="Answer in French.", kind="procedural")],
    )
    [item] = mem.reviews(scope)
    assert held.reviews == [item.id]
    before = mem.assemble("French", scope)
    assert before.trace.rule_ids == () and "French" not in before.text  # held, not approved yet
    [rule] = mem.review(item.id, True).unit_ids
    after = mem.assemble("French", scope)
    assert after.trace.rule_ids == (rule,) and after.text.count("Answer in French.") == 1
    assert rule not in after.trace.recalled_ids  # a rule is in context as a rule, not again as a hit
    earlier = mem.assemble("French", scope, as_of=EPOCH - timedelta(days=1))
    assert earlier.trace.rule_ids == ()  # not yet true then
    unknown = mem.assemble("French", scope, known_at=before.trace.created_at)
    assert unknown.trace.rule_ids == ()  # not yet approved then
