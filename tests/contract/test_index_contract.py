"""The MemoryIndex contract, run against every adapter: scope, both time axes and archive are
filtered by the search itself; query text is plain words; named entities come alone."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.domain.models import AsOf, SearchRequest, Triple, Unnamed, WriteBatch, search_terms, words
from tests.conftest import fresh_scope
from tests.examples import examples
from tests.factories import day, unit

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)

SETTINGS = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def load(store, index, scope, texts, **kw):
    """Write units with their vectors, as the write pipeline does."""
    units = [unit(scope, t, **kw) for t in texts]
    vectors = dict(zip((u.id for u in units), index.vectors(texts)))
    store.commit(WriteBatch(units=tuple(units), vectors=vectors, vector_model=index.embedder.name), scope)
    return units


def search(index, scopes, text, mode="hybrid", k=10, at=None):
    """The units the index finds for ``text`` in one mode, best first."""
    request = SearchRequest(
        scopes=tuple(scopes),
        at=at or AsOf.now(),
        k=k,
        fetch=max(3 * k, 30),
        vector=index.vectors([text])[0] if mode in ("hybrid", "semantic") else None,
        terms=tuple(search_terms(text)) if mode in ("hybrid", "lexical") else None,
        words=tuple(words(text)) if mode in ("hybrid", "entities") else None,
    )
    return [s.unit.id for s in index.recall(request)]


def test_searches_stay_in_scope(store_and_index):
    store, index = store_and_index
    alice, bob = fresh_scope(), fresh_scope()
    mine = load(store, index, alice, ["Alice lives in Lisbon", "Alice plays the cello"])
    load(store, index, bob, ["Bob lives in Lisbon", "Bob plays the cello too"])
    for mode in ("semantic", "lexical", "hybrid"):
        hits = search(index, [alice], "lives in Lisbon", mode)
        assert hits and set(hits) <= {u.id for u in mine} and hits[0] == mine[0].id, mode
    assert len(search(index, [alice], "anything", "semantic")) == 2  # min(k, units in scope)
    both = search(index, [alice, bob], "lives in Lisbon", "lexical")
    assert len(both) == 2  # several scopes are searched together when asked


def test_a_small_scope_among_many_gets_its_best(store_and_index):
    store, index = store_and_index
    crowd, tiny = fresh_scope(), fresh_scope()
    load(store, index, crowd, [f"note number {i} about the weather" for i in range(300)])
    mine = load(store, index, tiny, [f"my note {i}" for i in range(3)])
    assert sorted(search(index, [tiny], "note about the weather", "semantic", k=5)) == sorted(u.id for u in mine)


def test_archived_units_leave_search_but_stay_in_store(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    (u,) = load(store, index, scope, ["The launch code is swordfish"])
    store.set_archived(scope, [u.id], day(1))
    for mode in ("semantic", "lexical", "hybrid"):
        assert search(index, [scope], "launch code swordfish", mode) == []
    assert store.get_unit(u.id, scope) is not None
    store.set_archived(scope, [u.id], None)
    assert search(index, [scope], "swordfish", "lexical") == [u.id]


@SETTINGS
@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80))
def test_lexical_search_takes_any_text(store_and_index, text):
    """Any text is a query: it never raises and never reaches another scope's unit of the
    same content."""
    store, index = store_and_index
    mine, other = fresh_scope(), fresh_scope()
    (u,) = load(store, index, mine, [f"{text} lantern"])
    load(store, index, other, [f"{text} lantern"])
    for query in (text, f'"{text}" AND (x OR y\\ : ) {text}'):
        assert set(search(index, [mine], query, "lexical")) <= {u.id}
        assert set(search(index, [mine], query, "entities")) <= {u.id}


CONTENT = 'title:"Robert\'); DROP" AND (x OR y) \\ 🚀'
SYNTAX = list("\"():\\*~^[]{}!+-&|/?'") + [" AND ", " OR ", "&&", "||", " "]


@SETTINGS
@given(
    noise=st.lists(st.sampled_from(SYNTAX), max_size=8),
    word=st.sampled_from(["title", "Robert", "drop", "y"]),
    at=st.integers(0, 8),
)
def test_lucene_syntax_is_plain_words(store_and_index, noise, word, at):
    """Query syntax around a word of the content is ignored: the word alone decides, and
    syntax with no word finds nothing."""
    store, index = store_and_index
    scope = fresh_scope()
    (u,) = load(store, index, scope, [CONTENT])
    query = "".join(noise[:at]) + word + "".join(noise[at:])
    assert search(index, [scope], query, "lexical") == [u.id]
    assert search(index, [scope], "".join(noise), "lexical") == []


def test_entities_fully_named_by_the_query_come_alone(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    facts = [("Viktor Senvel", "Lanhan Athletic"), ("David Mersenbel", "Senvel FK")]
    units = []
    for s, o in facts:
        units += load(
            store, index, scope, [f"{s} plays for {o}"], triple=Triple(subject=s, predicate="plays_for", object=o)
        )
    # "Senvel FK" shares a word with the question but is not named by it
    assert search(index, [scope], "which club did Viktor Senvel play for?", "entities") == [units[0].id]
    # with no entity fully named, those sharing a word with the question are the best there is
    assert set(search(index, [scope], "what about Senvel?", "entities")) == {u.id for u in units}
    assert search(index, [fresh_scope()], "who plays the cello?", "entities") == []


def test_common_words_do_not_match_on_their_own(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    plan, capital = load(store, index, scope, ["What is the plan for the trip?", "The capital of France is Paris"])
    assert search(index, [scope], "what is the", "lexical") == []
    assert search(index, [scope], "what is the capital of France?", "lexical") == [capital.id]


def entities(index, scope, text: str, fanout: int) -> list:
    """The named-entity list alone for ``text`` (scored hits, best first), reading at most
    ``fanout`` units an entity."""
    request = SearchRequest(scopes=(scope,), at=AsOf.now(), k=10, fetch=30, words=tuple(words(text)), fanout=fanout)
    return index.recall(request)


def test_an_entity_named_in_more_units_than_are_read_ranks_none(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    hub = [
        u
        for n in range(4)
        for u in load(
            store,
            index,
            scope,
            [f"Zorn note {n}"],
            triple=Triple(subject="Zorn", predicate="noted", object=f"note {n}"),
        )
    ]
    [quill] = load(
        store, index, scope, ["Quill keeps bees"], triple=Triple(subject="Quill", predicate="keeps", object="bees")
    )
    # four units name Zorn: with three read an entity, which three would be arbitrary
    assert [s.unit.id for s in entities(index, scope, "what do Zorn and Quill do?", fanout=3)] == [quill.id]
    assert {s.unit.id for s in entities(index, scope, "what does Zorn do?", fanout=4)} == {u.id for u in hub}


def test_units_naming_more_of_the_question_entities_come_first(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    [one] = load(store, index, scope, ["Zorn sings"], triple=Triple(subject="Zorn", predicate="does", object="sings"))
    [both] = load(
        store, index, scope, ["Zorn met Quill"], triple=Triple(subject="Zorn", predicate="met", object="Quill")
    )
    [other] = load(
        store, index, scope, ["Quill swims"], triple=Triple(subject="Quill", predicate="does", object="swims")
    )
    found = entities(index, scope, "when did Zorn and Quill meet?", fanout=50)
    assert {s.unit.id for s in found} == {one.id, both.id, other.id}
    assert found[0].unit.id == both.id and found[0].score > found[1].score  # first, not tied for it


def test_names_that_speak_in_the_scope_leave_the_question(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    said, other = unit(scope, "Melanie: whales sing at night."), unit(scope, "Porto is lovely.")
    store.commit(
        WriteBatch(
            units=(said, other),
            vectors=dict(zip((said.id, other.id), index.vectors([said.content, other.content]))),
            vector_model=index.embedder.name,
            unit_mentions={said.id: (("Melanie", "speaker"),), other.id: (("Porto", "proper"),)},
        ),
        scope,
    )

    def first(names: tuple[str, ...]) -> str:
        whole, without = "Porto Porto", "whales"  # what the whole question and the question without names read
        request = SearchRequest(
            scopes=(scope,),
            at=AsOf.now(),
            k=2,
            fetch=30,
            vector=index.vectors([whole])[0],
            terms=tuple(search_terms(whole)),
            names=names,
            unnamed=(Unnamed(names=names, vector=index.vectors([without])[0], terms=tuple(search_terms(without))),),
        )
        return index.recall(request)[0].unit.id

    assert first(("melanie",)) == said.id  # she speaks in the scope: her name leaves the question
    assert first(("porto",)) == other.id  # named, but no speaker: the whole question is read


def test_the_question_similarity_reorders_the_fused_units(store_and_index):
    """With every list weighed 0 but the similarity, the fused units come in the order of their
    cosine with the question, the semantic list's own order, whatever the lists ranked; each
    direct hit carries that similarity, (1 + cos) / 2. Without a question vector there is none."""
    store, index = store_and_index
    scope = fresh_scope()
    load(
        store,
        index,
        scope,
        [
            "the red kite flies high",
            "a kite shop in town",
            "red paint on the fence",
            "the weather is mild",
            "kites and red balloons at the fair",
        ],
    )
    question = "red kite"

    def ranked(weights, mode="hybrid"):
        request = SearchRequest(
            scopes=(scope,),
            at=AsOf.now(),
            k=5,
            fetch=30,
            weights=weights,
            vector=index.vectors([question])[0] if mode == "hybrid" else None,
            terms=tuple(search_terms(question)),
            words=tuple(words(question)),
        )
        return index.recall(request)

    off = {"semantic": 0.0, "lexical": 0.0, "entities": 0.0, "time": 0.0, "speaker": 0.0}
    by_meaning = ranked({**off, "semantic": 1.0, "similarity": 0.0})
    by_similarity = ranked({**off, "lexical": 1e-9, "similarity": 1.0})
    assert [s.unit.id for s in by_similarity] == [s.unit.id for s in by_meaning]
    sims = [s.similarity for s in by_similarity]
    assert sims == sorted(sims, reverse=True) and all(0.0 <= x <= 1.0 for x in sims)
    assert all(s.similarity is None for s in ranked({**off, "lexical": 1.0}, mode="lexical"))
