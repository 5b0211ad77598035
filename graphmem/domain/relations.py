"""Relation questions ("where does Anna's team lead live?"): what they ask, and whether a text
says who X's R is, the bridge recall decomposes such a question through (docs/recall.md,
"Relation chains").

A relation word stands for the others of its group (``SYNONYMS``): after X's possessor ("Anna's
boss", "my supervisor"), or as the group's verb phrase after X ("Anna reports to Boris", "I
report to Boris": Boris is Anna's manager; "Boris reports to Anna" says the reverse). The
first person is the text's speaker, else the subject it was told in.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import NamedTuple

from graphmem.domain.mentions import COMMON, speakers, written
from graphmem.domain.tokenise import normalise

#: "X's R ..." in a question: X a name (capitalised words, as many as a name has), R the words
#: after it in any case ("Alice's Manager").
_RELATION = re.compile(r"\b((?-i:[A-Z][\w-]*(?: [A-Z][\w-]*){0,5}))['’]s ((?:[a-z][\w-]* ?){1,3})", re.I)
#: Else X one word in any case ("where does alice's manager live?"), not a common one.
_ANY_CASE = re.compile(r"\b([\w-]+)['’]s ((?:[a-z][\w-]* ?){1,3})", re.I)
#: Relation words that stand for each other, and the verb phrase that says the relation of its
#: grammatical subject, if any. Kept small: a wrong synonym makes a wrong bridge, which then
#: outranks every direct hit.
SYNONYMS: tuple[tuple[frozenset[str], str | None], ...] = (
    (frozenset({"manager", "boss", "supervisor"}), r"report(?:s|ed|ing)? to"),
    (frozenset({"wife", "husband", "spouse"}), r"married to"),
    (frozenset({"mother", "mom", "mum"}), None),
    (frozenset({"father", "dad"}), None),
)
#: Words a verb phrase may stand after X by ("I have reported to", "Anna is married to"): none
#: a name, which would be the verb's subject ("Anna said Boris reports to Cleo").
_BETWEEN = r"(?:['’](?:m|ve|d))?(?: (?-i:[a-z]+)){0,2}? "
#: A capitalised name, as a question or a text writes one.
_NAME = r"(?-i:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*)"


class Relation(NamedTuple):
    """What a question about "X's R" asks: X, where "X's" starts, and the words after it."""

    name: str
    start: int
    words: list[str]


class Bridge(NamedTuple):
    """A text stating "X's R is B": B, and how many of the question's words after "X's" are R."""

    name: str
    relation: int


def relation_of(query: str) -> Relation | None:
    """What a question about "X's R" asks, if it is one."""
    for m in (*_RELATION.finditer(query), *_ANY_CASE.finditer(query)):
        # An upper-case question's name starts after its common words ("WHERE DOES ALICE'S ...").
        words = m.group(1).split(" ")
        lead = words if m.group(1).isupper() or len(words) == 1 else words[:0]
        common = next((n for n, w in enumerate(lead) if normalise(w) not in COMMON), len(lead))
        if common < len(words):
            skipped = sum(len(w) + 1 for w in words[:common])
            return Relation(" ".join(words[common:]), m.start() + skipped, m.group(2).split())
    return None


def _group(word: str) -> tuple[frozenset[str], str | None]:
    """The relation words ``word`` stands for (itself at least) and their verb phrase."""
    folded = word.casefold()
    return next((group for group in SYNONYMS if folded in group[0]), (frozenset({folded}), None))


def _has(text: str, word: str) -> bool:
    return any(re.search(rf"\b{re.escape(w)}\b", text, re.I) for w in _group(word)[0])


def bridged(text: str, x: str, words: Sequence[str], selves: Collection[str]) -> Bridge | None:
    """Whether a text says who X's R is (``words``: the question's after "X's"; ``selves``: the
    subjects searched, normalised), and then the bridge.

    - R: the first words the text has too, the first after X's possessor or as its verb phrase;
    - B: the name after that verb phrase ("I report to Boris at Globex."), else the name that
      "is X's R" ("Boris is my boss."), else the last other name ("My manager at Globex is
      Priya.")."""
    me = normalise(x) in ({m.norm for m in speakers(text)} or selves)
    owner = rf"\b{re.escape(x)}['’]s\b" + (r"|\bmy\b" if me else "")
    doer = rf"\b{re.escape(x)}\b" + (r"|\bI\b" if me else "")
    verb = _group(words[0])[1]
    said = re.search(rf"(?:{doer}){_BETWEEN}{verb}\b", text, re.I) if verb else None
    if not said and not (re.search(owner, text, re.I) and _has(text, words[0])):
        return None
    relation = 1
    while relation < len(words) and _has(text, words[relation]):
        relation += 1
    others = [m for m in written(text) if m.norm != normalise(x) and m.kind != "speaker"]
    # "B is X's R" starts a sentence or a speaker's words, where B is not found as a name
    head = re.search(rf"(?:^|[.!?:] )\s*({_NAME}) (?:is|was|has been) (?:{owner})", text, re.I)
    names = [m.name for m in others if said and m.start >= said.end()]
    names += [head[1]] if head and normalise(head[1]) not in {normalise(x), *COMMON} else []
    names += [m.name for m in others[-1:]]
    return Bridge(names[0], relation) if names else None
