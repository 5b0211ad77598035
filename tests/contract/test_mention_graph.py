"""The mention graph, through the public API on every adapter: free text with no facts and no
LLM links to the entities it names, walks follow those links, and the links do not depend on
the order texts arrived in."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from graphmem.domain.models import AsOf, Episode, Fact, Page, Step, UnitFilter, normalise
from tests.conftest import fresh_scope

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)

PEOPLE = ["Ines", "Tomas", "Greta", "Omar", "Priya", "Lars", "Mei", "Nadia"]
CITIES = ["Porto", "Lyon", "Graz", "Turku", "Cork", "Bergen", "Genoa", "Leeds"]


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_walk_through_names_in_free_text_reaches_the_answer(mem):
    s = fresh_scope()
    random.seed(7)
    mem.remember("Ines's mentor is Tomas.", s, extractor="none")
    mem.remember("Tomas bought a flat in Porto.", s, extractor="none")
    for person, city in zip(PEOPLE[2:], CITIES[1:]):  # distractors about other people's homes
        mem.remember(f"{person} bought a flat in {city}.", s, extractor="none")
        mem.remember(f"{person}'s mentor is {random.choice(PEOPLE[2:])}.", s, extractor="none")
    # (the hashing embedder of the tests knows words, not meanings: the question shares "flat")
    question = "Where is the flat of Ines's mentor?"
    direct = mem.recall(question, s, k=5)
    assert "Tomas bought a flat in Porto." not in [h.unit.content for h in direct]
    walked = mem.recall(question, s, k=5, hops=2)
    porto = [h for h in walked if h.unit.content == "Tomas bought a flat in Porto."]
    assert porto and porto[0].hop >= 1, [h.unit.content for h in walked]
    assert porto[0].path == ["Ines's mentor is Tomas.", "Tomas", "Tomas bought a flat in Porto."]


def named(mem, scope, content: str) -> set[tuple[str, str]]:
    """(name, how) of the entities the unit with this content names, from its explanation
    (names by their norm: an entity is one whatever case a text writes it in)."""
    [unit] = [h.unit for h in mem.recall(content, scope, k=20) if h.unit.content == content]
    return {(normalise(name), how) for name, how in mem.explain(unit.id, scope)["entities"]}


def test_a_name_learnt_later_links_the_earlier_texts_that_name_it(mem):
    later, earlier = fresh_scope(), fresh_scope()
    text = "we met zed at the harbour"  # lower case: found only once a fact makes "Zed" a name
    fact = Fact(subject="Zed", predicate="works_at", object="the harbour", content="Zed works at the harbour")
    mem.remember(text, earlier, extractor="none")
    mem.remember("Zed's job", earlier, facts=[fact])
    mem.remember("Zed's job", later, facts=[fact])
    mem.remember(text, later, extractor="none")
    assert named(mem, earlier, text) == named(mem, later, text) == {("zed", "fact"), ("the harbour", "fact")}
    # a proper name seen later links the earlier text that opens a sentence with it
    mem.remember("Porto is lovely.", earlier, extractor="none")
    assert ("porto", "known") not in named(mem, earlier, "Porto is lovely.")
    mem.remember("We flew to Porto.", earlier, extractor="none")
    assert ("porto", "known") in named(mem, earlier, "Porto is lovely.")
    assert ("porto", "proper") in named(mem, earlier, "We flew to Porto.")


def episode_named(mem, scope, content: str) -> set[tuple[str, str]]:
    """(name, how) of the entities the episode of the unit with this content names, from the
    unit's explanation."""
    [unit] = [h.unit for h in mem.recall(content, scope, k=20) if h.unit.content == content]
    return {(normalise(name), how) for name, how in mem.explain(unit.id, scope)["episode_entities"]}


@pytest.mark.parametrize("name", ["zed quill", "AT&T", "C++ Guild", "Foo* Bar", "A OR B", 'Quote "Q" Inc'])
def test_a_name_learnt_later_links_the_earlier_episodes_that_name_it(mem, name):
    """An episode links the names it holds whether it came before or after what made them
    known, as its units do (names holding Lucene's syntax characters too: the text index
    finds the earlier episodes by their words)."""
    later, earlier = fresh_scope(), fresh_scope()
    text = f"yesterday I met {name} at the bar"
    fact = Fact(subject=name, predicate="lives_in", object="Oslo", content=f"{name} lives in Oslo")
    mem.remember(text, earlier, extractor="none")
    mem.remember(f"{name}'s home", earlier, facts=[fact])
    mem.remember(f"{name}'s home", later, facts=[fact])
    mem.remember(text, later, extractor="none")
    assert episode_named(mem, earlier, text) == episode_named(mem, later, text)
    assert (normalise(name), "fact") in episode_named(mem, earlier, text)
    assert named(mem, earlier, text) == named(mem, later, text)


class CommitsAfter:
    """A store whose first commit lets another writer's write (``first``) commit before it:
    that write lands after this writer drew its mention links and before it writes them."""

    def __init__(self, store, first):
        self._store, self._first = store, first

    def __getattr__(self, name):
        return getattr(self._store, name)

    def commit(self, batch, scope, relink=None):
        if self._first is not None:
            first, self._first = self._first, None
            first()
        return self._store.commit(batch, scope, relink)


@pytest.mark.parametrize("interrupted", ["text", "fact"])
def test_links_do_not_depend_on_which_of_two_writers_commits_first(mem, interrupted):
    """Two writers at once: one stores a text naming "zed", the other the fact that makes
    "Zed" a name; the other's write commits while the ``interrupted`` one's is between its
    plan and its commit. The text links Zed as when one wrote after the other."""
    from graphmem import GraphMem

    scope = fresh_scope()
    text = "we met zed at the harbour"
    fact = Fact(subject="Zed", predicate="works_at", object="the harbour", content="Zed works at the harbour")
    writes = {
        "text": lambda m: m.remember(text, scope, extractor="none"),
        "fact": lambda m: m.remember("Zed's job", scope, facts=[fact]),
    }
    other = "fact" if interrupted == "text" else "text"
    writer = GraphMem(CommitsAfter(mem.store, lambda: writes[other](mem)), mem.index)
    writes[interrupted](writer)
    assert named(mem, scope, text) == {("zed", "fact"), ("the harbour", "fact")}


class SearchesFirst:
    """A store whose commits wait until a write plan has searched the earlier texts (at most
    ten seconds; ``waited`` says whether it came): the batch an ingest plans while the one
    before commits searches them before that commit lands. ``then`` runs after the search."""

    def __init__(self, store, then=None):
        self._store, self._then = store, then
        self.searched, self.waited = threading.Event(), []

    def __getattr__(self, name):
        return getattr(self._store, name)

    def earlier_texts(self, scope, anchors):
        found = self._store.earlier_texts(scope, anchors)
        if self._then is not None:
            then, self._then = self._then, None
            then()
        self.searched.set()
        return found

    def commit(self, batch, scope, relink=None):
        self.waited.append(self.searched.wait(10))
        return self._store.commit(batch, scope, relink)


def ingest_two(writer, scope, first: str, second: str) -> None:
    """Two one-episode writes in one ingest: the second is planned while the first commits."""
    episodes = [
        Episode(scope=scope, occurred_at=d(f"2024-05-0{day}"), raw=raw, channel="chat")
        for day, raw in ((1, first), (2, second))
    ]
    writer.ingest(episodes, batch=1)


def test_a_name_made_known_while_the_text_naming_it_commits_links_it(mem):
    """An ingest plans a write that makes "Zed" a name while the write before it, a text
    naming zed, still commits: the text's commit lands after the plan searched the earlier
    texts, and the text links Zed all the same (the plan adds the texts of the write before
    it: ``TextsRead.ahead``)."""
    from graphmem import GraphMem

    scope = fresh_scope()
    store = SearchesFirst(mem.store)
    ingest_two(GraphMem(store, mem.index), scope, "we met zed at the harbour", "Zed works at the harbour.")
    assert store.waited[0]  # the text's commit came after the search
    assert ("zed", "fact") in named(mem, scope, "we met zed at the harbour")
    assert ("zed", "fact") in episode_named(mem, scope, "we met zed at the harbour")


def test_a_text_committed_after_the_plan_searched_is_found_by_the_commit(mem):
    """Another writer stores a text naming zed after an ingest's plan searched the earlier
    texts for the names its write makes known, and before that write commits: the commit
    finds the texts changed and searches again, so the text links Zed."""
    from graphmem import GraphMem

    scope = fresh_scope()
    late = "we met zed at the dock"
    store = SearchesFirst(mem.store, then=lambda: mem.remember(late, scope, extractor="none"))
    ingest_two(GraphMem(store, mem.index), scope, "the weather is fine", "Zed works at the harbour.")
    assert ("zed", "fact") in named(mem, scope, late)
    assert ("zed", "fact") in episode_named(mem, scope, late)


def test_texts_stored_while_another_writer_makes_their_name_known_all_link_it(mem):
    """Writers at once in one subject: two store texts naming "zed" one by one, a third the
    fact that makes it a name, in the middle of them. Every text links Zed, whichever commit
    waited for which (a commit that waits for the names reads them as they stand after)."""
    from graphmem import GraphMem

    for attempt in range(3):
        scope = fresh_scope()
        fact = Fact(subject="Zed", predicate="works_at", object="the docks", content="Zed works at the docks")
        texts = [f"we met zed at dock {writer}-{i}" for writer in range(2) for i in range(8)]
        writers = [GraphMem(mem.store, mem.index) for _ in range(3)]
        started = threading.Barrier(3)

        def store_texts(writer: int) -> None:
            started.wait()
            for text in texts[8 * writer : 8 * writer + 8]:
                writers[writer].remember(text, scope, extractor="none")

        def store_fact() -> None:
            started.wait()
            time.sleep(0.01 * attempt)
            writers[2].remember("Zed's job", scope, facts=[fact])

        with ThreadPoolExecutor(3) as pool:
            for done in [pool.submit(store_texts, 0), pool.submit(store_texts, 1), pool.submit(store_fact)]:
                done.result()
        units = {u.content: u.id for u in mem.store.list_units(scope, UnitFilter(), Page(limit=100))}
        unlinked = [
            t for t in texts if "zed" not in {normalise(n) for n, _ in mem.store.unit_entities(scope, units[t])}
        ]
        assert unlinked == []


def test_deleting_the_fact_unlinks_what_only_its_name_linked(mem):
    s = fresh_scope()
    text = "we met zed at the harbour"
    mem.remember(text, s, extractor="none")
    fact = Fact(subject="Zed", predicate="works_at", object="the harbour", content="Zed works at the harbour")
    mem.remember("Zed's job", s, facts=[fact], episode_id=f"{s.subject_id}:fact")
    [unit_id] = [u.id for u in mem.store.list_units(s, UnitFilter()) if u.content == text]
    assert ("zed", "fact") in named(mem, s, text)
    assert ("zed", "fact") in {(normalise(n), how) for n, how in mem.explain(unit_id, s)["episode_entities"]}
    mem.delete_episode(f"{s.subject_id}:fact", s)
    assert named(mem, s, text) == set()
    assert mem.explain(unit_id, s)["episode_entities"] == []  # its episode's link went too


def test_a_path_that_answers_the_question_lifts_a_direct_hit(mem):
    # Alice is named inside a sentence, so she is an entity: the walk starts where the question
    # is. Carol's line shares no word with the question, so the manager's line is among the
    # units a hop starts from (graphmem.domain.models.SEEDS). The walk is read from the index:
    # recall then ranks the chain of this relation question first (test_relation_chains.py).
    s = fresh_scope()
    for text in (
        "At work Alice reports to Bob.",
        "Bob lives in Lisbon.",
        "These days Alice lives in Berlin.",
        "Carol moved to Porto.",
    ):
        mem.remember(text, s, extractor="none")
    question = "where does Alice's manager live?"

    def found(hops: int) -> dict:
        request = mem.recaller.request(question, [s], 4, AsOf.now(), (), "hybrid", hops=hops)
        return {h.unit.content: h for h in mem.index.recall(request)}

    direct = found(0)
    # every text is a direct hit in so small a scope: the walk ranks them too
    walked = found(1)
    lisbon = walked["Bob lives in Lisbon."]
    assert lisbon.hop == 1 and lisbon.path == ("At work Alice reports to Bob.", "Bob", "Bob lives in Lisbon.")
    lift = lisbon.score - direct["Bob lives in Lisbon."].score
    assert lift == max(h.score - direct[c].score for c, h in walked.items()) > 0  # the best path is its
    # The path back (Lisbon -> Bob -> the manager's line) is the weaker of two that reach each
    # other: the line it would explain is the one that explains it, so it stays a direct hit.
    manager = walked["At work Alice reports to Bob."]
    assert manager.hop == 0 and manager.score == direct["At work Alice reports to Bob."].score


def test_no_two_hits_explain_each_other(mem):
    s = fresh_scope()
    rng = random.Random(11)
    for _ in range(30):  # a dense graph: most units reach most others through someone
        a, b = rng.sample(PEOPLE, 2)
        mem.remember(f"{a} met {b} in {rng.choice(CITIES)}.", s, extractor="none")
    for question in ("who met Ines?", "where did Tomas meet Greta?", "Lyon"):
        for hops in (1, 2, 3):
            hits = mem.recall(question, s, k=10, hops=hops)
            starts = {h.unit.content: h.path[0] for h in hits if h.hop == 1}
            assert not [c for c, start in starts.items() if starts.get(start) == c], (question, hops)


def test_a_walk_does_not_go_through_a_name_read_in_more_texts_than_a_hop_reads(mem):
    s = fresh_scope()
    mem.remember("Ines lent her bike to Zed.", s, extractor="none")
    for n in range(51):  # Zed is named in more texts than a hop reads from one name (50)
        mem.remember(f"Zed: note number {n} about nothing much.", s, extractor="none")
    walked = mem.recall("who did Ines lend her bike to?", s, k=10, hops=2)
    assert walked and all("Zed" not in h.path[1::2] for h in walked)


def test_a_walk_bridges_through_what_the_question_does_not_name(mem):
    # The quickstart's shape: the unit that names the manager and the one about Alice's own home
    # share Alice, whom the question names; a hop goes through Bob, whom it does not.
    s = fresh_scope()
    for text in ("At work Alice reports to Bob.", "Bob lives in Lisbon.", "These days Alice lives in Berlin."):
        mem.remember(text, s, extractor="none")
    question = "where does Alice's manager live?"
    [manager] = [h.unit for h in mem.recall("reports", s, k=3, mode="lexical")]
    request = mem.recaller.request(question, [s], 3, AsOf.now(), (), "hybrid")
    reached = mem.index.hop(request, Step(frontier=(manager.id,), limit=10))
    assert [(r.via, r.unit.content) for r in reached] == [("Bob", "Bob lives in Lisbon.")]
    # the same pair read backwards (from the answer to the unit that named the bridge) counts half
    [lisbon] = [h.unit for h in mem.recall("Lisbon", s, k=1, mode="lexical")]
    back = mem.index.hop(request, Step(frontier=(lisbon.id,), limit=10))
    assert [(r.source, r.unit.id) for r in back] == [(lisbon.id, manager.id)]
    assert reached[0].score == pytest.approx(2 * back[0].score)
    # and from both, only the better of the two paths that reach each other counts
    both = mem.index.hop(request, Step(frontier=(lisbon.id, manager.id), limit=10))
    assert [(r.source, r.unit.id) for r in both] == [(manager.id, lisbon.id)]
    # a question that names neither walks through both
    request = mem.recaller.request("where does the manager live?", [s], 3, AsOf.now(), (), "hybrid")
    reached = mem.index.hop(request, Step(frontier=(manager.id,), limit=10))
    assert sorted(r.via for r in reached) == ["Alice", "Bob"]


def test_a_hop_does_not_go_back_through_the_entity_it_came_by(mem):
    s = fresh_scope()
    for text in (
        "Ines met Tomas in Porto.",
        "Tomas met Greta in Lyon.",
        "Tomas met Omar in Graz.",
        "Greta sailed from Lyon.",
    ):
        mem.remember(text, s, extractor="none")
    [greta] = [
        h.unit for h in mem.recall("Greta Lyon", s, k=4, mode="lexical") if h.unit.content == "Tomas met Greta in Lyon."
    ]
    request = mem.recaller.request("where did they sail?", [s], 3, AsOf.now(), (), "hybrid")
    free = mem.index.hop(request, Step(frontier=(greta.id,), limit=10))
    assert {r.via for r in free} == {"Tomas", "Greta"}  # Ines's and Omar's by Tomas; the sail by Greta or Lyon
    came = mem.index.hop(request, Step(frontier=(greta.id,), through=("Tomas",), limit=10))
    assert [r.unit.content for r in came] == ["Greta sailed from Lyon."]  # as if it came by Tomas


def test_a_question_naming_a_speaker_ranks_what_they_said_above_what_was_said_to_them(mem):
    s = fresh_scope()
    said_to = "Caroline: Melanie, the book about whales was great, Melanie."  # more of the question's words
    said_by = "Melanie: Caroline, the book about whales was great."
    for text in (said_to, said_by, "Caroline: The weather is fine today.", "Melanie: My kids love the beach."):
        mem.remember(text, s, extractor="none")
    question = "What did Melanie think of the book about whales?"
    hits = [h.unit.content for h in mem.recall(question, s, k=4)]
    assert hits.index(said_by) < hits.index(said_to), hits
    # the words alone put what was said to her first
    hits = [h.unit.content for h in mem.recall(question, s, k=4, mode="lexical")]
    assert hits.index(said_to) < hits.index(said_by), hits


def test_a_name_learnt_after_a_text_was_archived_links_it_too(mem):
    s = fresh_scope()
    text = mem.remember("met zed today", s, extractor="none").unit_ids[0]
    assert mem.archive(s, now=datetime.now(UTC) + timedelta(days=400))[str(s)]  # out of search
    mem.remember("Zed's taste", s, facts=[Fact(subject="Zed", predicate="likes", object="Rome")])
    assert {(normalise(n), how) for n, how in mem.explain(text, s)["entities"]} == {("zed", "fact")}


def test_hits_told_in_one_conversation_gain_together(mem):
    # three turns of one evening and two told alone weeks apart, all about the garden: each turn
    # of the evening gains the conversation weight for each of the other two, a lone turn nothing
    from graphmem.domain.fusion import WEIGHTS
    from graphmem.pipelines.recall import Recaller

    s = fresh_scope()
    evening = d("2024-05-01T19:00:00")
    said = {
        "the garden needs water": evening,
        "we planted roses in the garden": evening + timedelta(minutes=20),
        "the garden fence is broken": evening + timedelta(minutes=50),
        "garden party next week": d("2024-05-20T12:00:00"),
        "I sold the garden chairs": d("2024-06-09T08:00:00"),
    }
    for text, at in said.items():
        mem.remember(text, s, at=at, extractor="none")
    question, scopes = "what about the garden?", mem.scopes(s, None, False)
    apart = {
        h.unit.content: h.score
        for h in Recaller(mem.index, weights={**WEIGHTS, "conversation": 0.0}).recall(question, scopes, 10)
    }
    hits = mem.recall(question, s, k=10)
    assert {h.unit.content for h in hits} == set(said)
    for h in hits:
        gain = 2 * WEIGHTS["conversation"] if said[h.unit.content] < evening + timedelta(hours=1) else 0.0
        assert h.score == pytest.approx(apart[h.unit.content] + gain), h.unit.content


def test_erasing_a_subject_and_sharing_an_episode_id_leave_another_subjects_episode_links(mem):
    """Episode ids are the caller's, so two subjects may use the same one: each episode's links
    are its own, and erasing one subject leaves the other's as they were (in memory they were
    kept by id alone: an erasure dropped every subject's)."""
    kept, victim = fresh_scope(), fresh_scope()
    mem.remember("We flew to Porto with Zed.", kept, extractor="none", episode_id="trip")
    mem.remember("Nothing about places.", victim, extractor="none", episode_id="trip")
    before = episode_named(mem, kept, "We flew to Porto with Zed.")
    assert ("porto", "proper") in before
    [unit] = [h.unit for h in mem.recall("Nothing about places.", victim, k=5) if h.unit.source.episode_id == "trip"]
    assert ("porto", "proper") not in {
        (normalise(n), how) for n, how in mem.explain(unit.id, victim)["episode_entities"]
    }
    mem.forget(victim)
    assert episode_named(mem, kept, "We flew to Porto with Zed.") == before
