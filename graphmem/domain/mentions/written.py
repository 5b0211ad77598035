"""Names a text shows itself, whatever the scope knows: speakers (``Name: message``) and proper
names (runs of capitalised words). The rules are in docs/recall.md, "How names are found"."""

from __future__ import annotations

import regex

from graphmem.domain.mentions.common import COMMON
from graphmem.domain.mentions.mention import Mention, mention_at

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


_OPENERS = frozenset(" \t\r\n\u00a0\"'“‘«([{*_-–—")
_ENDS = frozenset(".!?…:")


def speakers(text: str) -> list[Mention]:
    """Who speaks in the text ("Alex: ..."): ``written``'s speakers without its proper names
    (recall's confidence reads the speakers of every hit; the names were most of that time)."""
    found = []
    for m in _SPEAKER.finditer(text):
        # Every word must count: a subtitle ("In My Time: A Personal Memoir") is no speaker.
        if all(_counts(word) for word in m.group(1).split()):
            found.append(mention_at(text, m.start(1), m.end(1), "speaker"))
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
    return [mention_at(text, start, end, "proper")]


def written(text: str) -> list[Mention]:
    """The names the text itself shows, whatever the scope knows: speakers and proper names,
    not deduplicated (``mentions`` does that)."""
    return speakers(text) + _propers(text)
