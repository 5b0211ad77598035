"""The word runs of a text that may be names: how a store finds, without scanning every name it
knows, which of them a text holds."""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Generic, TypeVar

import regex

from graphmem.domain.mentions.common import COMMON
from graphmem.domain.tokenise import NAME_EDGES, normalise

#: The most words a known name can have. A store finds the names a text may hold by looking up
#: its runs of up to this many words (``name_spans``); longer names are ignored everywhere,
#: like common words, so what links to what does not depend on which way a name was found.
MAX_NAME_WORDS = 6
#: Symbols a name may start or end with beyond its words ("C++", "#tag", "Yahoo!").
_EDGE = 3
_SYMBOLS = regex.compile(rf"[^\w\s]{{0,{_EDGE}}}")
_WORD_RUN = regex.compile(r"\w+")
# ASCII characters str.split() splits on, but the blank (some, like "\x1f", are no \s to regex).
_OTHER_SPACE = regex.compile(
    "[" + regex.escape("".join(c for c in map(chr, range(128)) if c.isspace() and c != " ")) + "]"
)

T = TypeVar("T")

#: The first and the last words names may have (``name_edges``): which word runs to read.
Edges = tuple[Collection[str], Collection[str]]


def matchable(norm: str) -> bool:
    """Whether a normalised name may be matched at all: a common word or a single character
    would match ordinary text everywhere (the cheap half of ``usable``)."""
    return len(norm) > 1 and norm not in COMMON


@lru_cache(maxsize=1 << 16)  # a write checks the same names in several matchers, and again next batch
def usable(norm: str) -> bool:
    """A known name worth matching: ``matchable``, and within what ``name_spans`` looks up (a
    word, at most ``MAX_NAME_WORDS`` words, at most ``_EDGE`` symbols at an end)."""
    runs = [m.span() for m in _WORD_RUN.finditer(norm)]
    return (
        matchable(norm)
        and 0 < len(runs) <= MAX_NAME_WORDS
        and runs[0][0] <= _EDGE
        and len(norm) - runs[-1][1] <= _EDGE
        and norm in name_spans(norm)
    )  # e.g. an edge symbol set apart by a space is not


def name_spans(text: str, edges: Edges | None = None) -> set[str]:
    """Every run of 1 to ``MAX_NAME_WORDS`` whole words of the text, with or without up to
    ``_EDGE`` symbols touching either end ("C++", "#tag"), normalised as names are: the norm of
    every known name the text holds is among them.

    - with ``edges`` (firsts, lasts), only the runs whose ``name_edges`` are a first and a last:
      a store that knows which of the text's words (``edge_words``) begin and end a name of its
      reads no other run.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    runs = [(m.start(), m.end()) for m in _WORD_RUN.finditer(folded)]
    if not folded.isascii():
        found = {
            normalise(folded[a - len(p) : b + len(q)])
            for i, (a, _) in enumerate(runs)
            for j in range(i, min(i + MAX_NAME_WORDS, len(runs)))
            for b in (runs[j][1],)
            for p in _tails(_before(folded, a))
            for q in _heads(_after(folded, b))
        }
        return found if edges is None else {s for s in found if _edged(s, edges)}
    # ASCII text folds to itself: a span from a word to a word is its own norm once its spaces
    # are single blanks (most are: only the gaps with other spacing are collapsed); one with
    # symbols at an end is normalised whole (a symbol may still be a space to str.split). Its
    # edges are its first and last word.
    firsts: Sequence[int]
    lasts: set[int] | None
    if edges is None:
        firsts, lasts = range(len(runs)), None
    else:
        firsts = [i for i, (a, b) in enumerate(runs) if folded[a:b] in edges[0]]
        lasts = {j for j, (a, b) in enumerate(runs) if folded[a:b] in edges[1]}
        if not firsts or not lasts:
            return set()
    spaced = None  # how many of the gaps before run k are spaced otherwise than by single blanks
    if "  " in folded or _OTHER_SPACE.search(folded):
        spaced = [0]
        for (_, b), (a, _) in zip(runs, runs[1:]):
            gap = folded[b:a]
            spaced.append(spaced[-1] + ("  " in gap or any(c.isspace() and c != " " for c in gap)))
    found = set()
    for i in firsts:
        a = runs[i][0]
        before = _before(folded, a)
        for j in range(i, min(i + MAX_NAME_WORDS, len(runs))):
            if lasts is not None and j not in lasts:
                continue
            b = runs[j][1]
            core = folded[a:b]
            if spaced is not None and spaced[j] != spaced[i]:
                core = " ".join(core.split())
            found.add(core)
            after = _after(folded, b)
            if before or after:
                found.update(
                    " ".join((p + core + q).split()).strip(NAME_EDGES) for p in _tails(before) for q in _heads(after)
                )
    return found


def _symbols(text: str, start: int = 0) -> str:
    """The symbols (neither word nor space characters, at most ``_EDGE``) at ``text[start:]``."""
    found = _SYMBOLS.match(text, start)
    return found.group() if found else ""


def _before(folded: str, start: int) -> str:
    """The symbols a run starting at ``start`` may start with: up to ``_EDGE`` of those before it."""
    return _symbols(folded[max(start - _EDGE, 0) : start][::-1])[::-1]


def _after(folded: str, end: int) -> str:
    """The symbols a run ending at ``end`` may end with: up to ``_EDGE`` of those after it."""
    return _symbols(folded, end)


def _edged(norm: str, edges: Edges) -> bool:
    found = name_edges(norm)
    return found is not None and found[0] in edges[0] and found[1] in edges[1]


def runs_in(texts: Iterable[str], edges: Edges) -> set[str]:
    """The word runs of the texts that may be names: those ``name_spans`` reads with ``edges``
    that are ``matchable`` (a store looks names up by them)."""
    return {span for text in texts for span in name_spans(text, edges) if matchable(span)}


def names_in(texts: Iterable[str], names: Mapping[str, T]) -> dict[str, T]:
    """Of ``names`` (a name -> its value), those that one of the texts holds as a word run
    that may be a name (``runs_in``), as a store that knows them finds them."""
    return NameIndex(names).find(texts)


class NameIndex(Generic[T]):
    """Names (each with a value) by norm and by their first and last words, learnt one at a
    time: ``find`` costs what the texts hold, not how many names are known."""

    def __init__(self, names: Mapping[str, T] | None = None) -> None:
        self._values: dict[str, T] = {}
        self._by_norm: dict[str, dict[str, T]] = {}
        self._firsts: set[str] = set()
        self._lasts: set[str] = set()
        for name, value in (names or {}).items():
            self.add(name, value)

    def add(self, name: str, value: T) -> None:
        """Learn a name, or give a known one its new value."""
        if name in self._values and self._values[name] == value:
            return
        self._values[name] = value
        norm = normalise(name)
        self._by_norm.setdefault(norm, {})[name] = value
        edges = name_edges(norm)
        if edges:
            self._firsts.add(edges[0])
            self._lasts.add(edges[1])

    def find(self, texts: Iterable[str]) -> dict[str, T]:
        """The names (with their values) that one of the texts holds as a word run that may be
        a name (``runs_in``)."""
        runs = runs_in(texts, (self._firsts, self._lasts))
        return {name: value for run in runs for name, value in self._by_norm.get(run, {}).items()}


def edge_words(text: str) -> set[str]:
    """The words the text's runs (``name_spans``) begin and end with (``name_edges``): which
    of them begin or end a name decides which runs may be one."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return set(_WORD_RUN.findall(folded))
    return {word for span in name_spans(text) for word in name_edges(span) or ()}


def _tails(symbols: str) -> list[str]:
    """What a span may start with of the symbols before its first word: none, or the last 1..n."""
    return [symbols[len(symbols) - n :] for n in range(len(symbols) + 1)]


def _heads(symbols: str) -> list[str]:
    """What a span may end with of the symbols after its last word: none, or the first 1..n."""
    return [symbols[:n] for n in range(len(symbols) + 1)]


def name_edges(norm: str) -> tuple[str, str] | None:
    """The first and the last word of a normalised name (or word run), as ``name_spans`` reads
    words ("kelmar f.c." -> ("kelmar", "c")); None when it has none. A store keeps them with
    each entity, so that of a text's word runs only those that begin and end as some name of
    the scope does are looked up."""
    if norm.isascii():  # most words are letters and digits only: then they are the blank-split words
        words = norm.split()
        if words and words[0].isalnum() and words[-1].isalnum():
            return words[0], words[-1]
    words = _WORD_RUN.findall(norm)
    return (words[0], words[-1]) if words else None
