"""Mentions of named things in free text, with no LLM: what links episodes to entities.

Three sources are read, each on its own, and merged:

- **speaker**: a line of the form ``Name: message`` names ``Name`` (one to three capitalised
  words, none of them in :data:`COMMON`: role labels such as ``User`` or ``Note`` are not
  names), also after a bracketed stamp (``[1:56 pm on 8 May, 2023] Caroline: Hey``).
- **proper**: runs of capitalised words, anywhere in a sentence: ``Alice``, ``New York``,
  ``LGBTQ`` (acronyms count), ``iPhone``, ``J. K. Rowling``, ``Bank of America`` (lower-case
  particles such as ``of``, ``de``, ``van`` join two capitalised words). Words of the closed list
  :data:`COMMON` (pronouns, determiners, question words, auxiliaries, prepositions,
  conjunctions, frequent chat openers, titles, days and months) are never a name and are
  dropped from the edges of a run: "On Monday Alice" gives ``Alice``, "Dr. Smith" gives
  ``Smith``, "The Hague" gives ``Hague``; inside a run they stay ("Gone With The Wind").
  A clitic ends a run and is dropped: "met Alice's manager" and "Bob’s" give ``Alice`` and
  ``Bob``; "Don't" is never a name. A single letter alone is not a name ("I", "U").
  A sentence's first word alone is not taken as a name unless it is an acronym: capitalisation
  says nothing there, and on chat text most such words are ordinary ("Sounds good", "Painting
  is fun", "Life's busy"). It is found when it is a known name, or when the run goes on ("New
  York is big" gives ``New York``).
- **known**: names already known in the scope, matched case-folded as whole words anywhere in
  the text (``alice`` in "ask alice", not ``al`` in "also"; a name wrapped over a line break
  too), in one Aho-Corasick pass however many names there are.
  Overlapping known names resolve leftmost-longest ("New York" hides "York"); a known name
  inside a proper run is reported too, so a known ``Paris`` is still found in a sentence that
  starts "Visited Paris".

Identity is :func:`graphmem.domain.models.normalise` of the name as written, the same norm entity ids
are built from: ``alice``, ``ALICE`` and ``Alice`` are one entity. A result depends only on the
text and the set of known names, never on the order names were learnt, so texts can be scanned
again when the scope learns a name.

Limits: English capitalisation. A run starting a sentence keeps its first word ("Visited
Paris"); title-case text gives fragments ("Where It All Began" gives ``Began``); a possessive
inside a title splits it ("Philosopher's Stone"); words of :data:`COMMON` are never names even
when they are one ("May", "Will" as people). Known names match ordinary words case-folded: a
name learnt from an ordinary word written with a capital ("See you soon", "GoT") then matches
that word in every text, so which names become known is the caller's decision.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal, TypeVar

import ahocorasick
import regex

from graphmem.domain.tokenise import NAME_EDGES, normalise


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


#: Words that are not names on their own, whatever their case.
COMMON = frozenset(
    [
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "we",
        "us",
        "our",
        "ours",
        "ourselves",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "y'all",
        "ya",
        "one",
        "someone",
        "somebody",
        "something",
        "anyone",
        "anybody",
        "anything",
        "everyone",
        "everybody",
        "everything",
        "nobody",
        "nothing",
        "none",
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "some",
        "any",
        "each",
        "every",
        "either",
        "neither",
        "no",
        "all",
        "both",
        "few",
        "many",
        "much",
        "more",
        "most",
        "other",
        "another",
        "such",
        "several",
        "enough",
        "last",
        "next",
        "same",
        "own",
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "when",
        "where",
        "why",
        "how",
        "whatever",
        "whenever",
        "wherever",
        "however",
        "whoever",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "ought",
        "gonna",
        "wanna",
        "gotta",
        "let",
        "about",
        "above",
        "across",
        "after",
        "against",
        "along",
        "among",
        "around",
        "at",
        "before",
        "behind",
        "below",
        "beneath",
        "beside",
        "besides",
        "between",
        "beyond",
        "by",
        "down",
        "during",
        "except",
        "for",
        "from",
        "in",
        "inside",
        "into",
        "like",
        "near",
        "of",
        "off",
        "on",
        "onto",
        "out",
        "outside",
        "over",
        "past",
        "since",
        "through",
        "throughout",
        "till",
        "to",
        "toward",
        "towards",
        "under",
        "until",
        "up",
        "upon",
        "with",
        "within",
        "without",
        "via",
        "per",
        "and",
        "but",
        "or",
        "nor",
        "so",
        "yet",
        "because",
        "although",
        "though",
        "if",
        "unless",
        "while",
        "whereas",
        "as",
        "than",
        "then",
        "also",
        "plus",
        "not",
        "just",
        "only",
        "even",
        "still",
        "already",
        "too",
        "very",
        "really",
        "quite",
        "maybe",
        "perhaps",
        "probably",
        "definitely",
        "actually",
        "basically",
        "honestly",
        "seriously",
        "literally",
        "anyway",
        "anyways",
        "otherwise",
        "instead",
        "meanwhile",
        "finally",
        "now",
        "today",
        "tonight",
        "tomorrow",
        "yesterday",
        "here",
        "there",
        "always",
        "never",
        "sometimes",
        "often",
        "usually",
        "again",
        "soon",
        "later",
        "once",
        "ever",
        "almost",
        "well",
        "hey",
        "hi",
        "hello",
        "hiya",
        "yo",
        "oh",
        "ooh",
        "ah",
        "aw",
        "aww",
        "awww",
        "wow",
        "whoa",
        "woah",
        "woohoo",
        "yay",
        "yeah",
        "yea",
        "yes",
        "yep",
        "yup",
        "nope",
        "nah",
        "ok",
        "okay",
        "alright",
        "sure",
        "thanks",
        "thank",
        "thx",
        "please",
        "sorry",
        "congrats",
        "congratulations",
        "cheers",
        "bye",
        "goodbye",
        "haha",
        "hahaha",
        "lol",
        "omg",
        "btw",
        "tbh",
        "idk",
        "imo",
        "fyi",
        "ttyl",
        "hmm",
        "um",
        "uh",
        "ugh",
        "oof",
        "phew",
        "yikes",
        "dear",
        "good",
        "great",
        "nice",
        "cool",
        "awesome",
        "amazing",
        "glad",
        "absolutely",
        "totally",
        "exactly",
        "anytime",
        "mr",
        "mrs",
        "ms",
        "miss",
        "mx",
        "dr",
        "prof",
        "sir",
        "madam",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "mon",
        "tue",
        "tues",
        "wed",
        "thu",
        "thur",
        "thurs",
        "fri",
        "sat",
        "sun",
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "user",
        "assistant",
        "system",
        "human",
        "bot",
        "note",
        "update",
        "edit",
        "re",
        "ps",
    ]
)

#: Lower-case words that join two capitalised words into one name ("Bank of America").
_PARTICLES = "of|the|de|da|di|del|della|der|den|van|von|la|le|du|des"


# A capitalised word: a dotted initialism ("U.S."), an initial or a usual abbreviation before
# another capital ("J. K.", "St. Louis", "Dr. Smith": the period does not end a sentence there),
# or a word with a capital in its first two letters ("Alice", "LGBTQ", "iPhone", "eBay"; not a
# camel-case predicate such as "isLocatedIn", which would join the names around it into one),
# hyphenated or with apostrophes inside ("Jean-Luc", "O'Brien", "Alice's").
_WORD = (
    r"(?:\p{Lu}\.){2,}"
    r"|(?:(?!I\.)\p{Lu}|St|Mt|Ft|Dr|Mr|Mrs|Ms|Prof|Jr|Sr)\.(?= \p{Lu})"
    r"|\p{Ll}?[\p{Lu}\p{Lt}]\w*(?:['’-]\w+)*"
)
_RUN = regex.compile(rf"(?<![\w'’.:/-])(?:{_WORD})(?:(?: (?:{_PARTICLES})){{0,2}} (?:{_WORD}))*")
_RUN_WORD = regex.compile(rf"{_WORD}|\S+")
_CLITIC = regex.compile(r"(.+?)['’](?:s|m|d|ve|re|ll)$", regex.IGNORECASE)
# "Name: message" at a line start, after an optional bracketed stamp ("[1:56 pm] Caroline: Hey").
_SPEAKER = regex.compile(
    rf"^[ \t]*(?:\[[^\]\n]*\][ \t]*)?((?:{_WORD})(?: (?:{_WORD})){{0,2}})[ \t]*:(?=\s)", regex.MULTILINE
)

_GRAPHEME = regex.compile(r"\X", regex.DOTALL)
_NON_WORD = regex.compile(r"\W")
_WORD_RUN = regex.compile(r"\w+")
# ASCII characters str.split() splits on, but the blank (some, like "\x1f", are no \s to regex).
_OTHER_SPACE = regex.compile(
    "[" + regex.escape("".join(c for c in map(chr, range(128)) if c.isspace() and c != " ")) + "]"
)

#: The most words a known name can have. A store finds the names a text may hold by looking up
#: its runs of up to this many words (``name_spans``); longer names are ignored everywhere,
#: like common words, so what links to what does not depend on which way a name was found.
MAX_NAME_WORDS = 6
#: Symbols a name may start or end with beyond its words ("C++", "#tag", "Yahoo!").
_EDGE = 3
_SYMBOLS = regex.compile(rf"[^\w\s]{{0,{_EDGE}}}")

_OPENERS = frozenset(" \t\r\n\u00a0\"'“‘«([{*_-–—")
_ENDS = frozenset(".!?…:")

Kind = Literal["speaker", "known", "fact", "proper"]
# When two sources find the same name at the same place, the kind says how the text itself
# shows it: as a speaker, as a proper name, or only by what the scope knows.
_RANK = {"speaker": 0, "proper": 1, "known": 2, "fact": 2}


@dataclass(frozen=True)
class Mention:
    """A named thing in a text: ``text[start:end] == name``."""

    name: str  # as written, clitic stripped
    norm: str  # normalise(name): the entity identity
    start: int
    end: int
    kind: Kind


def _words_only(text: str) -> str:
    """The text padded with a space each side and every non-word character made a space
    (same offsets plus one): a name padded the same way is then found only as whole words, and
    the automaton reports no hit inside a word ("al" in "also")."""
    return f" {_NON_WORD.sub(' ', text)} "


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


def matchable(norm: str) -> bool:
    """Whether a normalised name may be matched at all: a common word or a single character
    would match ordinary text everywhere (the cheap half of ``_usable``)."""
    return len(norm) > 1 and norm not in COMMON


@lru_cache(maxsize=1 << 16)  # a write checks the same names in several matchers, and again next batch
def _usable(norm: str) -> bool:
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


T = TypeVar("T")

#: The first and the last words names may have (``name_edges``): which word runs to read.
Edges = tuple[Collection[str], Collection[str]]


def name_spans(text: str, edges: Edges | None = None) -> set[str]:
    """Every run of 1 to ``MAX_NAME_WORDS`` whole words of the text, with or without up to
    ``_EDGE`` symbols touching either end ("C++", "#tag"), normalised as names are
    (``graphmem.domain.models.normalise``): the norm of every known name the text holds is among them.
    With ``edges`` (firsts, lasts), only the runs whose ``name_edges`` are a first and a last:
    a store that knows which of the text's words (``edge_words``) begin and end a name of its
    reads no other run.

    >>> sorted(name_spans("I use C++"))
    ['c', 'c+', 'c++', 'i', 'i use', 'i use c', 'i use c+', 'i use c++', 'use', 'use c', 'use c+', 'use c++']
    >>> sorted(name_spans("I use C++", ({"use"}, {"c"})))
    ['use c', 'use c+', 'use c++']
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


def _before(folded: str, start: int) -> str:
    """The symbols a run starting at ``start`` may start with: up to ``_EDGE`` of those before it."""
    return _SYMBOLS.match(folded[max(start - _EDGE, 0) : start][::-1]).group()[::-1]


def _after(folded: str, end: int) -> str:
    """The symbols a run ending at ``end`` may end with: up to ``_EDGE`` of those after it."""
    return _SYMBOLS.match(folded, end).group()


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
    norms = {name: normalise(name) for name in names}
    edges = [e for e in map(name_edges, norms.values()) if e]
    runs = runs_in(texts, ({first for first, _ in edges}, {last for _, last in edges}))
    return {name: value for name, value in names.items() if norms[name] in runs}


def edge_words(text: str) -> set[str]:
    """The words the text's runs (``name_spans``) begin and end with (``name_edges``): which
    of them begin or end a name decides which runs may be one.

    >>> sorted(edge_words("Meet Ana at C++ club."))
    ['ana', 'at', 'c', 'club', 'meet']
    """
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
    words; None when it has none. A store keeps them with each entity, so that of a text's word
    runs only those that begin and end as some name of the scope does are looked up.

    >>> name_edges("kelmar f.c.")
    ('kelmar', 'c')
    """
    if norm.isascii():  # most words are letters and digits only: then they are the blank-split words
        words = norm.split()
        if words and words[0].isalnum() and words[-1].isalnum():
            return words[0], words[-1]
    words = _WORD_RUN.findall(norm)
    return (words[0], words[-1]) if words else None


class NameMatcher:
    """Known names of one scope, matched case-folded on word boundaries (Aho-Corasick).

    Names are kept by norm, so the result of :meth:`find` depends only on the set of names
    added, not on their order or spelling. Names that are common words (:data:`COMMON`) or one
    character long are ignored: they would match ordinary text everywhere. The automaton is
    rebuilt lazily by the first :meth:`find` after an :meth:`add` that brought a new name, so
    one matcher must not be shared between threads while names are added.

    >>> NameMatcher(["Alice", "New York"]).find("alice moved to NEW YORK")[1].name
    'NEW YORK'
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
            if not _usable(norm):
                continue
            key = _words_only(norm)
            norms = self._automaton.get(key, frozenset())
            if norm not in norms:
                self._automaton.add_word(key, norms | {norm})
                self._size += 1
                self._stale = True

    def find(self, text: str) -> list[Mention]:
        """Every known name in the text, leftmost-longest, in text order."""
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
                found.append(_mention(text, start, end, "known"))
                reached = end
        return found


class KnownNames:
    """What a scope knows as names: the names of entities its facts are about, found
    case-folded anywhere (a fact says they are names), and the names seen as proper names or
    speakers in its texts, found where written with a capital (so a name opening a sentence is
    found once it was seen elsewhere, while an ordinary word written with a capital somewhere
    does not match that word everywhere).

    A match is ``known`` when it is written with a capital and the scope has seen the name so,
    ``fact`` when only a fact makes it a name (it holds while a fact is about it).

    >>> known = KnownNames(facts=["Zed"], seen=["Tomas"])
    >>> [(m.name, m.kind) for m in known.find("zed said Tomas left; tomas stayed")]
    [('zed', 'fact'), ('Tomas', 'known')]
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


def _mention(text: str, start: int, end: int, kind: Kind) -> Mention:
    name = text[start:end]
    return Mention(name=name, norm=normalise(name), start=start, end=end, kind=kind)


def speakers(text: str) -> list[Mention]:
    """Who speaks in the text ("Alex: ..."): ``written``'s speakers without its proper names
    (recall's confidence reads the speakers of every hit; the names were most of that time)."""
    found = []
    for m in _SPEAKER.finditer(text):
        # Every word must count: a subtitle ("In My Time: A Personal Memoir") is no speaker.
        if all(_counts(word) for word in m.group(1).split()):
            found.append(_mention(text, m.start(1), m.end(1), "speaker"))
    return found


def _base(word: str) -> tuple[str, bool]:
    """(the word without its clitic, whether it had one): "Alice's" -> ("Alice", True)."""
    m = _CLITIC.match(word)
    return (m.group(1), True) if m else (word, False)


def _counts(word: str) -> bool:
    """Whether a word of a run can be (part of) a name: not a particle, a negated verb
    ("Don't", "Isn’t") or a word of COMMON."""
    if not any(c.isupper() for c in word[:2]):
        return False
    lower = word.casefold()
    return not lower.endswith(("n't", "n’t")) and lower.rstrip(".") not in COMMON


def _sentence_start(text: str, pos: int) -> bool:
    """Whether pos starts a sentence: only spaces, opening quotes or brackets lie between it
    and the text start, a line break, or an end of sentence or colon followed by a space
    ("Caroline: Hey", not "CS:GO")."""
    i = pos - 1
    spaced = False
    while i >= 0 and text[i] in _OPENERS:
        if text[i] == "\n":
            return True
        spaced = spaced or text[i].isspace()
        i -= 1
    return i < 0 or (spaced and text[i] in _ENDS)


def _propers(text: str) -> list[Mention]:
    found = []
    for run in _RUN.finditer(text):
        # A lone capitalised word starting a sentence is most often an ordinary word ("Sounds
        # good", "Painting is fun"); it is found when it is a known name.
        initial = run.start() if _sentence_start(text, run.start()) else -1
        words: list[tuple[int, int, bool]] = []  # (start, end, counts) of the run's words
        for word in _RUN_WORD.finditer(text, run.start(), run.end()):
            base, clitic = _base(word.group())
            words.append((word.start(), word.start() + len(base), _counts(base)))
            if clitic:  # "Alice's manager": the possessor is the name
                found.extend(_name(text, words, initial))
                words = []
        found.extend(_name(text, words, initial))
    return found


def _name(text: str, words: list[tuple[int, int, bool]], initial: int) -> list[Mention]:
    """The name a run of words holds, stripped of the words that do not count at its edges
    ("On Monday Alice" -> "Alice", "Gone With The Wind" stays whole); none when that leaves
    a single letter, or one word starting a sentence that is not an acronym."""
    kept = [(start, end) for start, end, counts in words if counts]
    if not kept:
        return []
    start, end = kept[0][0], kept[-1][1]
    if len(kept) == 1:
        word = text[start:end].rstrip(".")
        if len(word) < 2 or (start == initial and not word.isupper()):
            return []
    return [_mention(text, start, end, "proper")]


def written(text: str) -> list[Mention]:
    """The names the text itself shows, whatever the scope knows: speakers and proper names,
    not deduplicated (``mentions`` does that)."""
    return speakers(text) + _propers(text)


def mentions(
    text: str, known: NameMatcher | KnownNames | None = None, shown: Sequence[Mention] | None = None
) -> list[Mention]:
    """Every mention in the text, deduplicated by norm (first occurrence kept), in text order.

    Args:
        text: any free text (a chat turn, a passage).
        known: the scope's known names, matched case-folded anywhere in the text.
        shown: ``written(text)`` when the caller has it already (it is not changed).

    >>> [(m.name, m.kind) for m in mentions("Caroline: Hey Mel! I met Alice's manager in New York.")]
    [('Caroline', 'speaker'), ('Mel', 'proper'), ('Alice', 'proper'), ('New York', 'proper')]
    """
    found = written(text) if shown is None else [*shown]
    if known is not None:
        found += known.find(text)
    found.sort(key=lambda m: (m.start, _RANK[m.kind], -m.end))
    seen: set[str] = set()
    kept = []
    for m in found:
        if m.norm not in seen:
            seen.add(m.norm)
            kept.append(m)
    return sorted(kept, key=lambda m: (m.start, -m.end))
