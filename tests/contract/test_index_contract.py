"""The MemoryIndex contract, run against every adapter."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.models import Triple, entity_id
from tests.conftest import fresh_scope
from tests.factories import unit


def load(store, index, scope, texts):
    units = [unit(scope, t) for t in texts]
    for u in units:
        store.put_unit(u)
    index.upsert(units)
    return units


def test_searches_stay_in_scope(store_and_index):
    store, index = store_and_index
    alice, bob = fresh_scope(), fresh_scope()
    mine = load(store, index, alice, ["Alice lives in Lisbon", "Alice plays the cello"])
    load(store, index, bob, ["Bob lives in Lisbon", "Bob plays the cello too"])
    for search in (index.search_semantic, index.search_lexical):
        hits = search("lives in Lisbon", alice, 10)
        assert {h.id for h in hits} <= {u.id for u in mine}
        assert hits and hits[0].id == mine[0].id
    assert len(index.search_semantic("anything", alice, 10)) == 2  # min(k, units in scope)


def test_removed_units_leave_search_but_stay_in_store(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    (u,) = load(store, index, scope, ["The launch code is swordfish"])
    index.remove(scope, [u.id])
    assert index.search_lexical("swordfish", scope, 5) == []
    assert index.search_semantic("launch code", scope, 5) == []
    assert store.get_unit(u.id, scope) is not None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80))
def test_lexical_search_takes_any_text(store_and_index, text):
    """Any text is a query: it never raises and never reaches another scope's unit of the
    same content."""
    store, index = store_and_index
    mine, other = fresh_scope(), fresh_scope()
    (u,) = load(store, index, mine, [f"{text} lantern"])
    load(store, index, other, [f"{text} lantern"])
    for query in (text, f'"{text}" AND (x OR y\\ : ) {text}'):
        assert {h.id for h in index.search_lexical(query, mine, 5)} <= {u.id}


CONTENT = 'title:"Robert\'); DROP" AND (x OR y) \\ 🚀'
SYNTAX = list('"():\\*~^[]{}!+-&|/?\'') + [" AND ", " OR ", "&&", "||", " "]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(noise=st.lists(st.sampled_from(SYNTAX), max_size=8), word=st.sampled_from(["title", "Robert", "drop", "y"]),
       at=st.integers(0, 8))
def test_lucene_syntax_is_plain_words(store_and_index, noise, word, at):
    """Query syntax around a word of the content is ignored: the word alone decides, and
    syntax with no word finds nothing."""
    store, index = store_and_index
    scope = fresh_scope()
    (u,) = load(store, index, scope, [CONTENT])
    query = "".join(noise[:at]) + word + "".join(noise[at:])
    assert [h.id for h in index.search_lexical(query, scope, 5)] == [u.id]
    assert index.search_lexical("".join(noise), scope, 5) == []


def test_entities_fully_named_by_the_query_come_alone(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    facts = [("Viktor Senvel", "Lanhan Athletic"), ("David Mersenbel", "Senvel FK")]
    units = [unit(scope, f"{s} plays for {o}", triple=Triple(subject=s, predicate="plays_for", object=o)) for s, o in facts]
    for u in units:
        store.put_unit(u)
    index.upsert(units)
    # "Senvel FK" shares a word with the question but is not named by it
    assert [h.id for h in index.search_entities("which club did Viktor Senvel play for?", scope, 5)] == [
        entity_id(scope, "Viktor Senvel")
    ]
    # with no entity fully named, those sharing a word with the query are the best there is
    partial = {h.id for h in index.search_entities("what about Senvel?", scope, 5)}
    assert partial == {entity_id(scope, "Viktor Senvel"), entity_id(scope, "Senvel FK")}
    assert index.search_entities("who plays the cello?", fresh_scope(), 5) == []


def test_common_words_do_not_match_on_their_own(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    load(store, index, scope, ["What is the plan for the trip?", "The capital of France is Paris"])
    assert index.search_lexical("what is the", scope, 5) == []
    assert [h.score > 0 for h in index.search_lexical("what is the capital of France?", scope, 5)] == [True]
