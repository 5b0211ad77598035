"""Mentions: the names a free text links to, found without an LLM.

Tables pin each rule of graphmem.domain.mentions (what counts as a name, and what does not); the
properties check what the store relies on when it re-scans texts as a scope learns names: the
result is a pure function of the text and the set of known names.
"""

from __future__ import annotations

import unicodedata

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from graphmem.domain.mentions import (
    MAX_NAME_WORDS,
    KnownNames,
    NameIndex,
    NameMatcher,
    digest,
    edge_words,
    mentions,
    name_edges,
    name_spans,
    runs_in,
)
from graphmem.domain.mentions.known import name_words, text_words
from graphmem.domain.models import NamesRead, Scope, TextsRead, entity_id, normalise


def names(text: str, known: NameMatcher | None = None) -> list[str]:
    return [m.name for m in mentions(text, known)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I moved to Porto with Alice.", ["Porto", "Alice"]),
        ("we flew to New York last week", ["New York"]),
        ("the Bank of America and Leonardo da Vinci", ["Bank of America", "Leonardo da Vinci"]),
        ("we watched The Lord of the Rings again", ["Lord of the Rings"]),
        ("a book by J. K. Rowling, read in St. Louis", ["J. K. Rowling", "St. Louis"]),
        ("she lives in the U.S. now", ["U.S."]),
        ("I went to a LGBTQ support group", ["LGBTQ"]),
        ("my new iPhone and Jean-Luc's O'Brien mug", ["iPhone", "Jean-Luc", "O'Brien"]),
        ("we played CS:GO all night", ["CS"]),
        # A fact's camel-case predicate is no capitalised word: it parts subject and object.
        ("Joe Haverty isAffiliatedTo Arsenal F C", ["Joe Haverty", "Arsenal F C"]),
    ],
)
def test_runs_of_capitalised_words_are_names(text, expected):
    assert names(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Hague is far. Yesterday Bob called.", ["Hague", "Bob"]),  # determiner, time word
        ("On Monday Alice called in May.", ["Alice"]),  # days and months are no names
        ("Hey Mel! Wow, Caroline!", ["Mel", "Caroline"]),  # chat openers
        ("I think I'm late. Don't wait, I'll go.", []),  # "I" and contractions
        ("Dr. Smith met Mr. Jones.", ["Smith", "Jones"]),  # titles
        ("after World War I. New rules", ["World War"]),  # "I." ends a sentence, no initial
        ("Sounds good. Painting is fun. Life's busy.", []),  # a sentence's first word alone
        ("New York is big. Gone With The Wind is long.", ["New York", "Gone With The Wind"]),
        ("NASA launched it.", ["NASA"]),  # an acronym starting a sentence
        ("we chose X, then Y.", []),  # single letters
    ],
)
def test_common_words_and_lone_sentence_starts_are_not_names(text, expected):
    assert names(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I met Alice's manager.", ["Alice"]),
        ("we stayed at Bob’s place", ["Bob"]),  # typographic apostrophe
        ("at O'Brien's pub with ALICE'S dog", ["O'Brien", "ALICE"]),
        ("Mel's and Bob’s kids", ["Bob"]),  # a possessive alone starting a sentence: not taken
    ],
)
def test_possessives_are_folded_into_the_possessor(text, expected):
    assert names(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline: Painting is fun.", [("Caroline", "speaker")]),
        ("[1:56 pm on 8 May, 2023] Caroline: Hey Mel!", [("Caroline", "speaker"), ("Mel", "proper")]),
        ("Alice: hi\nBob Stone: hey\n", [("Alice", "speaker"), ("Bob Stone", "speaker")]),
        ("User: where is Porto?", [("Porto", "proper")]),  # a role label is no speaker
        ("The Lesser Evil: political ethics", [("Lesser Evil", "proper")]),  # title, subtitle
        ("the time is 10:30 now", []),
    ],
)
def test_a_chat_line_names_its_speaker(text, expected):
    assert [(m.name, m.kind) for m in mentions(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I met José and Zoë in Zürich.", ["José", "Zoë", "Zürich"]),
        ("we met Ǆemal and Łukasz", ["Ǆemal", "Łukasz"]),  # a titlecase letter, a Polish one
        ("I met Zoë, then ZOË again", ["Zoë"]),  # one norm, first occurrence kept
    ],
)
def test_unicode_names(text, expected):
    assert names(text) == expected


def test_case_variants_are_one_entity():
    text = "alice said ALICE and Alice are one"
    found = mentions(text, NameMatcher(["Alice"]))
    assert [(m.name, m.start, m.kind) for m in found] == [("alice", 0, "known")]
    scope = Scope.parse("user:u")
    assert {entity_id(scope, v) for v in ("alice", "ALICE", "Alice", "Alice.")} == {entity_id(scope, found[0].name)}


@pytest.mark.parametrize(
    ("known", "text", "expected"),
    [
        (["Al"], "also, Al's", [(6, "Al")]),  # word boundaries only
        (["New York", "York"], "new york, then york", [(0, "new york"), (15, "york")]),  # longest
        (["Paris"], "Visited Paris. paris", [(0, "Visited Paris"), (8, "Paris")]),  # inside a run
        (["C++"], "I write c++ daily", [(8, "c++")]),  # a name ending in punctuation
        (["Zoë"], "zoe\u0308 is here", [(0, "zoe\u0308")]),  # decomposed form of the name
        (["ﬁnn"], "FINN came", [(0, "FINN")]),  # compatibility form of the name
        (["New York"], "in new\nyork", [(3, "new\nyork")]),  # a name wrapped over two lines
        (["U.S.", "U S"], "u s and U.S.", [(0, "u s"), (8, "U.S.")]),  # alike but for punctuation
        (["May", "I", "x"], "may I x", []),  # common words and single characters are ignored
    ],
)
def test_known_names_match_case_folded_on_word_boundaries(known, text, expected):
    assert [(m.start, m.name) for m in mentions(text, NameMatcher(known))] == expected


def test_matcher_learns_incrementally():
    matcher = NameMatcher(["Alice"])
    assert names("alice and bob", matcher) == ["alice"]
    matcher.add(["Bob", "bob", "BOB"])
    assert names("alice and bob", matcher) == ["alice", "bob"]
    assert len(matcher) == 2


# Texts built from name-like words, common words and the separators the rules look at, so the
# properties below meet speakers, possessives, runs and sentence starts, not only noise.
WORDS = st.sampled_from(
    [
        "Alice",
        "alice",
        "ALICE",
        "New",
        "York",
        "new",
        "york",
        "The",
        "the",
        "of",
        "Bank",
        "I",
        "May",
        "José",
        "jose\u0301",
        "Zoë",
        "ZOË",
        "St.",
        "J.",
        "LGBTQ",
        "iPhone",
        "Don't",
        "Hey",
        "Mel",
        "al",
        "Al",
        "U.S.",
        "u s",
        "C++",
    ]
)
SEPARATORS = st.sampled_from([" ", " ", ". ", ", ", ": ", "\n", "'s ", "’s ", "! ", " [x] "])
TEXTS = st.one_of(
    st.lists(st.tuples(WORDS, SEPARATORS), max_size=14).map(lambda parts: "".join(w + s for w, s in parts)),
    st.text(max_size=60),
)
NAMES = st.lists(st.one_of(WORDS, st.text(min_size=1, max_size=8)), max_size=8)


@given(TEXTS, NAMES, st.randoms(use_true_random=False))
def test_mentions_do_not_depend_on_the_order_names_were_learnt(text, known, rnd):
    shuffled = list(known)
    rnd.shuffle(shuffled)
    incremental = NameMatcher()
    for name in shuffled:  # one at a time, with a scan in between: the automaton is rebuilt
        incremental.add([name])
        incremental.find(text)
    assert mentions(text, NameMatcher(known)) == mentions(text, incremental)


@given(TEXTS, NAMES)
def test_every_mention_is_a_span_of_the_text_with_its_norm(text, known):
    found = mentions(text, NameMatcher(known))
    assert [m.start for m in found] == sorted(m.start for m in found)
    assert len({m.norm for m in found}) == len(found)
    for m in found:
        assert 0 <= m.start < m.end <= len(text)
        assert text[m.start : m.end] == m.name
        assert m.norm == normalise(m.name) != ""
        if m.kind == "known":
            assert m.norm in {normalise(n) for n in known}


@given(TEXTS)
def test_learning_a_texts_own_names_changes_nothing(text):
    first = mentions(text)
    again = mentions(text, NameMatcher(m.name for m in first))
    assert {m.norm for m in again} == {m.norm for m in first}


@given(TEXTS, NAMES)
@example(text="\x1b\u00b8", known=["\x1b\u00b8"])  # NFKC sets the cedilla apart from the symbol
def test_a_store_looking_names_up_by_word_runs_finds_every_name_the_matcher_finds(text, known):
    # Stores look known names up by the norms of a text's word runs (entity ids are derived
    # from norms): a name found by the matcher but missing from them would never be linked.
    spans = name_spans(text)
    for m in NameMatcher(known).find(text):
        assert m.norm in spans


@given(TEXTS, NAMES)
@example(text="U.S. troops", known=["u.s"])
@example(text="İstanbul", known=["i̇stanbul"])
def test_a_text_the_matcher_finds_a_name_in_holds_each_of_its_words(text, known):
    # The in-memory store reads only the texts holding every word of a new name
    # (``ScopeView.naming``): a text the matcher finds the name in must be among them.
    words = text_words(text)
    for m in NameMatcher(known).find(text):
        assert any(set(name_words(n)) <= words for n in known if normalise(n) == m.norm)


@given(TEXTS, st.lists(st.tuples(NAMES.map(" ".join), st.booleans()), max_size=8))
@example(text="ask a or Bo", learnt=[("a", True), ("Bo", False), ("bo", True), ("Bo", True)])
def test_names_learnt_one_at_a_time_are_found_as_a_scan_of_them_all_finds_them(text, learnt):
    # A name learnt again takes its last value; the reference reads every name's norm per call.
    index: NameIndex[bool] = NameIndex()
    for name, value in learnt:
        index.add(name, value)
        index.find([text])
    final = dict(learnt)
    edges = [e for e in (name_edges(normalise(n)) for n in final) if e]
    runs = runs_in([text], ({first for first, _ in edges}, {last for _, last in edges}))
    assert index.find([text]) == {n: v for n, v in final.items() if normalise(n) in runs}


@given(st.text(alphabet=st.characters(max_codepoint=127)) | TEXTS)
def test_word_runs_are_norms(text):
    # Entity ids are derived from norms: a run looked up as anything but its norm finds nothing
    # (ASCII text takes a shorter way to its norms).
    assert all(normalise(span) == span for span in name_spans(text))


def every_run(text: str) -> set[str]:
    """What name_spans promises, the plain way: the norm of every run of 1 to MAX_NAME_WORDS
    words of the folded text, with or without up to 3 symbols touching either end."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    runs = [m.span() for m in regex.finditer(r"\w+", folded)]
    edge = regex.compile(r"[^\w\s]{0,3}")
    found = set()
    for i, (a, _) in enumerate(runs):
        lead = len(edge.match(folded[max(a - 3, 0) : a][::-1]).group())
        for j in range(i, min(i + MAX_NAME_WORDS, len(runs))):
            b = runs[j][1]
            trail = len(edge.match(folded, b).group())
            found |= {normalise(folded[a - n : b + m]) for n in range(lead + 1) for m in range(trail + 1)}
    return found


@given(st.text(alphabet=st.characters(max_codepoint=127)) | TEXTS)
@example(text="a  b\tc\n\nd .e, #f++ (g) h!!")
def test_word_runs_are_every_run_of_words_normalised(text):
    # The short way ASCII text takes to its norms gives what the plain way gives.
    assert name_spans(text) == every_run(text)


@given(
    since=st.lists(st.none() | st.sampled_from(["k1", "k2"]), max_size=3),
    ahead=st.none() | st.sampled_from(["k1", "k2"]),
)
def test_texts_found_while_planning_stand_unless_a_commit_but_the_pending_one_changed_them(since, ahead):
    """``since``: the key each commit that changed the texts after the read recorded (None: one
    no plan can know); ``ahead``: that of the pending commit whose texts the plan added. The
    texts stand when nothing changed them since, or only that commit did."""
    read = TextsRead(version=4, last="before", ahead=ahead)
    stands = read.stands(4 + len(since), since[-1] if since else "before")
    assert stands == (not since or (ahead is not None and since == [ahead]))


@given(st.data(), st.text(alphabet=st.characters(max_codepoint=127)) | TEXTS)
@example(data=None, text="a_b ó\x1fc++ (d)! é.f")
def test_word_runs_with_given_edges_are_those_runs_whose_edges_they_are(data, text):
    # A store reads only the runs that begin and end with words its names begin and end with:
    # they must be exactly those of all the runs, whichever of the text's words those are.
    words = sorted(edge_words(text))
    assert words == sorted({w for span in name_spans(text) for w in name_edges(span) or ()})
    if data is None:
        firsts, lasts = set(words[::2]), set(words[1::2]) | {"c"}
    else:
        firsts = data.draw(st.sets(st.sampled_from(words))) if words else set()
        lasts = data.draw(st.sets(st.sampled_from(words))) if words else set()
    assert name_spans(text, (firsts, lasts)) == {
        span for span in name_spans(text) if name_edges(span)[0] in firsts and name_edges(span)[1] in lasts
    }


@given(st.text(alphabet=st.characters(max_codepoint=127)) | TEXTS | NAMES.map(" ".join))
def test_a_names_edges_are_its_first_and_last_word(text):
    words = regex.findall(r"\w+", normalise(text))
    assert name_edges(normalise(text)) == ((words[0], words[-1]) if words else None)


def test_the_word_runs_a_store_looks_names_up_by():
    assert sorted(name_spans("I use C++")) == [
        "c", "c+", "c++", "i", "i use", "i use c", "i use c+", "i use c++", "use", "use c", "use c+", "use c++"
    ]  # fmt: skip
    assert sorted(name_spans("I use C++", ({"use"}, {"c"}))) == ["use c", "use c+", "use c++"]
    assert sorted(edge_words("Meet Ana at C++ club.")) == ["ana", "at", "c", "club", "meet"]
    assert name_edges("kelmar f.c.") == ("kelmar", "c")


def test_a_fact_makes_a_name_known_in_any_case_a_text_only_where_capitalised():
    assert [m.name for m in NameMatcher(["Alice", "New York"]).find("alice moved to NEW YORK")] == ["alice", "NEW YORK"]
    known = KnownNames(facts=["Zed"], seen=["Tomas"])
    assert [(m.name, m.kind) for m in known.find("zed said Tomas left; tomas stayed")] == [
        ("zed", "fact"),
        ("Tomas", "known"),
    ]
    found = mentions("Caroline: Hey Mel! I met Alice's manager in New York.")
    assert [(m.name, m.kind) for m in found] == [
        ("Caroline", "speaker"),
        ("Mel", "proper"),
        ("Alice", "proper"),
        ("New York", "proper"),
    ]


def test_names_longer_than_the_lookup_are_ignored():
    long = " ".join(["Grand"] * MAX_NAME_WORDS + ["Hotel"])
    assert NameMatcher([long]).find(f"we stayed at the {long}") == []
    assert [m.name for m in NameMatcher([long[6:]]).find(f"we stayed at the {long}")] == [long[6:]]
    assert NameMatcher(["C++++", "!!"]).find("C++++ !!") == []
    assert [m.name for m in NameMatcher(["C++"]).find("I use C++.")] == ["C++"]


_NAMES = st.frozensets(st.tuples(st.sampled_from(["Zed", "zed", "Ines", "Porto"]), st.booleans()), min_size=1)


@given(made=st.lists(_NAMES, max_size=3), ahead=st.none() | _NAMES)
def test_links_are_drawn_again_unless_every_name_made_known_since_was_included(made, ahead):
    """``made``: the names of each commit since the read, in order; ``ahead``: those of the
    pending commit the links included. A read that is not outdated missed no name (normalised,
    as names are matched); one that saw nothing since, or only the pending commit, is not."""
    read = NamesRead(version=3, last="before", ahead=digest(ahead) if ahead else None)
    outdated = read.outdated(3 + len(made), digest(made[-1]) if made else "before")
    included = {(normalise(n), f) for n, f in ahead or ()}
    if not outdated:
        assert all({(normalise(n), f) for n, f in m} <= included for m in made)
    if not made or made == [ahead]:
        assert not outdated
