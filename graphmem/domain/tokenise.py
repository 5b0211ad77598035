"""Text as search and entity matching read it: normalised names, plain words and lexical terms."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: What ``normalise`` drops around a name.
NAME_EDGES = " .,;:!?\"'()[]{}"


@lru_cache(maxsize=1 << 16)  # names and word runs recur across a batch's texts
def normalise(text: str) -> str:
    """Normalised text for hashing and entity names: NFKC, case-folded, whitespace collapsed,
    surrounding punctuation dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(text.split()).strip(NAME_EDGES)


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The plain words of a text, lower-cased: how search and entity matching see it."""
    if text.isascii():  # lowering ASCII moves no word boundary: one call for the whole text
        return _WORD.findall(text.lower())
    return [w.lower() for w in _WORD.findall(text)]


#: Words too common to tell texts apart. A lexical query drops them: BM25 would weight them
#: low, but across many of them the low weights still add up to noise.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "did",
        "do",
        "does",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "how",
        "why",
        "with",
        "from",
        "by",
        "as",
        "that",
        "this",
        "it",
        "its",
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "her",
        "his",
        "their",
        "our",
        "my",
        "me",
        "your",
    ]
)


# A word as the fulltext index's English analyzer sees it: apostrophes inside keep it whole
# ("don't", "O'Brien"), and a possessive is dropped ("Caroline's" is "caroline"). Split at the
# apostrophe instead, the query would look for "s" and "t", words no indexed text holds.
_TERM = re.compile(r"\w+(?:['’]\w+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_CLITIC = re.compile(r"['’]")


def terms(text: str) -> list[str]:
    """The lexical terms of a text, lower-cased (see ``search_terms``)."""
    return [_POSSESSIVE.sub("", t.lower()) for t in _TERM.findall(text)]


def search_terms(text: str) -> list[str]:
    """The distinct terms of a query a lexical search looks for, in order: stopwords go, with
    their contractions ("what's", "I'm", "they're")."""
    return [t for t in dict.fromkeys(terms(text)) if _CLITIC.split(t)[0] not in STOPWORDS]
