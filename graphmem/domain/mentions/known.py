"""Names a scope already knows, found in any text case-folded as whole words (Aho-Corasick):
``alice`` in "ask alice", not ``al`` in "also", however many names there are."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import ahocorasick
import regex

from graphmem.domain.mentions.mention import Mention, mention_at
from graphmem.domain.mentions.spans import usable
from graphmem.domain.tokenise import normalise

_GRAPHEME = regex.compile(r"\X", regex.DOTALL)
_NON_WORD = regex.compile(r"\W")


def digest(anchors: Iterable[tuple[str, bool]]) -> str:
    """A commit's names (``WriteBatch.anchors``) as a short fingerprint: what a write planned
    while that commit was pending compares with the scope's last one (``NamesRead``)."""
    text = json.dumps(sorted((normalise(name), fact) for name, fact in anchors))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


#: Owners (units or episodes, by id) with the names each holds, as (name, kind) pairs.
Named = dict[str, tuple[tuple[str, str], ...]]


def named_in(anchors: Sequence[tuple[str, bool]], texts: Mapping[str, str]) -> Named:
    """Of ``texts`` (owner -> text), those that name one of ``anchors`` (names a write makes
    known, each with whether a fact makes it a name: ``WriteBatch.anchors``), with the names
    each holds as (name, kind) pairs."""
    known = KnownNames(facts=[n for n, fact in anchors if fact], seen=[n for n, fact in anchors if not fact])
    named = {owner: tuple((m.name, m.kind) for m in known.find(text)) for owner, text in texts.items()}
    return {owner: names for owner, names in named.items() if names}


def _words_only(text: str) -> str:
    """The text padded with a space each side and every non-word character made a space
    (same offsets plus one): a name padded the same way is then found only as whole words, and
    the automaton reports no hit inside a word ("al" in "also")."""
    return f" {_NON_WORD.sub(' ', text)} "


def name_words(name: str) -> list[str]:
    """The words a ``NameMatcher`` looks for of a name: a text holds the name only if it holds
    each of them as a whole word (``text_words``)."""
    return _words_only(normalise(name)).split()


def text_words(text: str) -> set[str]:
    """The whole words of a text as a ``NameMatcher`` reads it (case-folded)."""
    return set(_words_only(_fold(text)[0]).split())


def _fold(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """The text as normalise() sees names (NFKC, case-folded), with, when lengths differ, the
    start and end offset in text of each folded character."""
    if text.isascii():
        return text.lower(), None, None
    folded = text.casefold()
    if len(folded) == len(text) and unicodedata.is_normalized("NFKC", text):
        return folded, None, None
    # Fold each character with its combining marks, so a decomposed "é" matches a name written
    # with a composed one, and map every folded character back to where it came from.
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for grapheme in _GRAPHEME.finditer(text):
        part = unicodedata.normalize("NFKC", grapheme.group()).casefold()
        parts.append(part)
        starts.extend([grapheme.start()] * len(part))
        ends.extend([grapheme.end()] * len(part))
    return "".join(parts), starts, ends


class NameMatcher:
    """Known names of one scope, matched case-folded on word boundaries.

    - the result of ``find`` depends only on the set of names added (kept by norm), not on
      their order or spelling;
    - names that are not ``usable`` (common words, one character) are ignored;
    - ``find`` rebuilds the automaton after an ``add`` that brought a new name, so a matcher is
      not shared between threads while names are added.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        # Padded words-only key -> the norms written that way ("u.s" and "u s" share a key).
        self._automaton = ahocorasick.Automaton()
        self._size = 0
        self._stale = False
        self.add(names)

    def __len__(self) -> int:
        """How many distinct names (norms) are known."""
        return self._size

    def add(self, names: Iterable[str]) -> None:
        """Learn names (incremental; names already known cost nothing)."""
        for name in names:
            norm = normalise(name)
            if not usable(norm):
                continue
            key = _words_only(norm)
            norms = self._automaton.get(key, frozenset())
            if norm not in norms:
                self._automaton.add_word(key, norms | {norm})
                self._size += 1
                self._stale = True

    def find(self, text: str) -> list[Mention]:
        """Every known name in the text, leftmost-longest ("New York" hides "York"), in text
        order, as written there."""
        if not self._size:
            return []
        if self._stale:
            self._automaton.make_automaton()
            self._stale = False
        folded, starts, ends = _fold(text)
        spans: list[tuple[int, int]] = []
        for last, norms in self._automaton.iter(_words_only(folded)):
            # The hit ends on the trailing pad; folded offsets are one less than the padded ones.
            stop = last - 1
            first = stop - len(next(iter(norms)))
            if " ".join(folded[first:stop].split()) in norms:  # not only alike in its words
                start = first if starts is None else starts[first]
                end = stop if ends is None else ends[stop - 1]
                spans.append((start, end))
        # Leftmost first, and the longest of those starting at one place.
        spans.sort(key=lambda span: (span[0], -span[1]))
        found: list[Mention] = []
        reached = 0
        for start, end in spans:
            if start >= reached:
                found.append(mention_at(text, start, end, "known"))
                reached = end
        return found


class KnownNames:
    """What a scope knows as names, in two sets:

    - ``facts``: the names of entities its facts are about, found case-folded anywhere;
    - ``seen``: the names seen as proper names or speakers in its texts, found only where
      written with a capital (an ordinary word once written with a capital does not match
      that word everywhere).

    A match is ``known`` when written with a capital and seen so, else ``fact``.
    """

    def __init__(self, facts: Iterable[str] = (), seen: Iterable[str] = ()) -> None:
        self.facts = NameMatcher(facts)
        self.seen = NameMatcher(seen)
        self._seen = {normalise(n) for n in seen}

    def find(self, text: str) -> list[Mention]:
        by_fact = [
            m if text[m.start].isupper() and m.norm in self._seen else replace(m, kind="fact")
            for m in self.facts.find(text)
        ]
        return by_fact + [m for m in self.seen.find(text) if text[m.start].isupper()]
