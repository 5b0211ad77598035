"""Lexical query terms: words as the fulltext index's English analyzer keeps them, so a query
never looks for fragments ("s", "t") that no indexed text holds."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from graphmem.models import STOPWORDS, search_terms

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
