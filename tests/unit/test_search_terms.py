"""Lexical query terms: words as the fulltext index's English analyzer keeps them, so a query
never looks for fragments ("s", "t") that no indexed text holds."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.domain.models import UNNAMED
from graphmem.domain.tokenise import STOPWORDS, search_terms, words
from graphmem.pipelines.recall import without_names

#: Characters with a meaning in Lucene's query syntax.
LUCENE = set('+-&|!(){}[]^"~*?:\\/')


def test_apostrophes_keep_a_word_whole_and_possessives_and_stopword_contractions_go():
    text = "What's Caroline's plan? I'm sure she won't go to O'Brien’s party; it's fine"
    assert search_terms(text) == ["caroline", "plan", "sure", "won't", "go", "o'brien", "party", "fine"]


@given(st.text(alphabet=st.sampled_from(list("abis tI'’-:()\"*\\")) | st.characters(), max_size=60))
def test_terms_are_plain_distinct_words_without_stopwords(text):
    found = search_terms(text)
    assert len(found) == len(set(found))
    for term in found:
        assert term == term.lower() and not set(term) & LUCENE
        assert not re.search(r"['’]s$", term) and re.split(r"['’]", term)[0] not in STOPWORDS


@pytest.mark.parametrize(
    "question, expected",
    [
        ("What books has Melanie read?", {("melanie",): "What books has read?"}),
        ("What do Melanie’s kids like?", {("melanie",): "What do kids like?"}),
        (
            "Did Caroline meet Jon, and did Jon call Caroline?",
            {
                ("caroline",): "Did meet Jon, and did Jon call ?",
                ("jon",): "Did Caroline meet , and did call Caroline?",
                ("caroline", "jon"): "Did meet , and did call ?",
            },
        ),
        (
            "Did Ada, Bo and Cy meet?",
            {("ada",): "Did , Bo and Cy meet?", ("bo",): "Did Ada, and Cy meet?", ("ada", "bo"): "Did , and Cy meet?"},
        ),  # the first UNNAMED names only
        ("what did she read?", {}),
        ("¹A0", {}),  # one word to search ("¹a0"): no name inside it leaves
    ],
)
def test_a_question_without_each_set_of_its_first_names(question, expected):
    assert without_names(question) == expected


@given(
    st.text(max_size=200)
    | st.lists(
        st.sampled_from(["Ada", "Bo's", "Cy", "met", "and", "?", ",", "’s", "O'Neil", "São", "ÆON", "x"]), max_size=12
    ).map(" ".join)
)
def test_a_question_without_names_keeps_only_its_own_words(question):
    variants = without_names(question)
    assert len(variants) <= 2**UNNAMED - 1
    for names, rest in variants.items():
        assert 1 <= len(names) <= UNNAMED and list(names) == sorted(set(names))
        left = Counter(words(question))
        left.subtract(words(rest))
        assert min(left.values(), default=0) >= 0  # nothing added, only names taken out
