"""Rule extractor: common English fact patterns, no LLM.

Each sentence is read in three steps: its time words are set aside
(``graphmem.domain.timewords``), what it does to a fact is read from its wording, and the fact
left is matched against the patterns below. A match is a semantic candidate with a triple,
``I`` and ``my`` read as the scope's subject id.

What a sentence does (``Candidate.op``):

- ``end``: it was true and stopped ("no longer", "used to", "quit", "left", a past tense), from
  the start of the time named, else the episode's;
- ``retract``: it never was ("never", a plain "not", "I was mistaken");
- ``assert``: it holds, from the start of a time named wholly before the episode, else from the
  episode's time; a taste keeps its time words ("I like tea in summer").

Sentences without a fact become one episodic unit; docs/concepts.md gives the limits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphmem.domain.mentions import speakers
from graphmem.domain.models import Candidate, Episode, FactOp, MemoryKind, Triple
from graphmem.domain.timewords import find_window
from graphmem.extract import NoneExtractor

# Names are capitalised whatever the case of the words around them.
_NAME = r"(?P<s>I|(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))"
_OBJ = r"(?P<o>[\w'-]+(?: [\w'-]+){0,5}?)"
_PROPER = r"(?P<o>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,4})"
_END = r"\s*(?:now|today|recently|again)?\s*[.!]?$"


def _p(core: str) -> re.Pattern[str]:
    return re.compile(rf"^{core}{_END}", re.I)


@dataclass(frozen=True)
class Pattern:
    """A fact's wording: ``past`` wordings tell of a state that is over, ``ends`` ones of its
    end, the others of a state that holds (or began)."""

    regex: re.Pattern[str]
    predicate: str
    single: bool
    past: bool = False
    ends: bool = False
    #: A taste: its time words are a habit ("I like tea in summer"), not when it began.
    habit: bool = False


PATTERNS: list[Pattern] = [
    Pattern(_p(rf"{_NAME} (?:(?:have |has )?moved|relocated) to {_OBJ}"), "lives_in", True),
    Pattern(
        _p(rf"{_NAME} (?:live|lives|am living|is living|are living|(?:have|has) (?:lived|been living)) in {_OBJ}"),
        "lives_in",
        True,
    ),
    Pattern(_p(rf"{_NAME} (?:lived|was living) in {_OBJ}"), "lives_in", True, past=True),
    Pattern(_p(rf"{_NAME} (?:moved out of|moved away from) {_OBJ}"), "lives_in", True, ends=True),
    Pattern(
        _p(
            rf"{_NAME} (?:work|works|am working|is working|are working|(?:have|has) (?:worked|been working)"
            rf"|started working|started) (?:at|for) {_OBJ}"
        ),
        "works_at",
        True,
    ),
    Pattern(_p(rf"{_NAME} joined {_PROPER}"), "works_at", True),
    Pattern(_p(rf"{_NAME} (?:worked|was working) (?:at|for) {_OBJ}"), "works_at", True, past=True),
    Pattern(
        re.compile(
            rf"^{_NAME} (?:quit|left|resigned from)(?: (?:my|his|her|their) job (?:at|with))? "
            rf"{_PROPER}{_END}"
        ),
        "works_at",
        True,
        ends=True,
    ),
    Pattern(_p(rf"{_NAME} (?:report|reports|(?:have|has) reported) to {_OBJ}"), "reports_to", True),
    Pattern(_p(rf"(?:my|{_NAME}'s) (?:manager|boss) is {_OBJ}"), "reports_to", True),
    Pattern(re.compile(rf"^(?P<o>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*) is my (?:manager|boss){_END}"), "reports_to", True),
    Pattern(_p(rf"{_NAME} reported to {_OBJ}"), "reports_to", True, past=True),
    Pattern(
        re.compile(rf"^(?P<o>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*) was my (?:manager|boss){_END}"),
        "reports_to",
        True,
        past=True,
    ),
    Pattern(_p(rf"(?:my name is|I am called) {_OBJ}"), "name", True),
    Pattern(_p(rf"{_NAME} (?:am|is|are|(?:have|has) been|got) married to {_OBJ}"), "married_to", True),
    Pattern(_p(rf"{_NAME} (?:was|were) married to {_OBJ}"), "married_to", True, past=True),
    Pattern(_p(rf"{_NAME} got divorced from {_OBJ}"), "married_to", True, ends=True),
    Pattern(_p(rf"{_NAME} (?:am|is|are|(?:have|has) been|became) allergic to {_OBJ}"), "allergic_to", False),
    Pattern(_p(rf"{_NAME} (?:was|were) allergic to {_OBJ}"), "allergic_to", False, past=True),
    Pattern(_p(rf"{_NAME} (?:like|likes|love|loves|enjoy|enjoys) {_OBJ}"), "likes", False, habit=True),
    Pattern(_p(rf"{_NAME} (?:liked|loved|enjoyed) {_OBJ}"), "likes", False, past=True, habit=True),
]

#: Wordings around a fact that say it was wrong; taken away before the fact is read.
_CORRECTION = re.compile(
    r"^(?:actually|sorry|no|wait|correction|scratch that|ignore what i said|my mistake|my bad"
    r"|that(?: i)?s (?:wrong|not right|not true|incorrect)|that was (?:wrong|a mistake)"
    r"|i was (?:mistaken|wrong)(?: about that)?|i got that wrong|i never did)$",
    re.I,
)
#: Wordings that only soften a sentence.
_FILLER = re.compile(
    r"^(?:(?:btw|by the way|ok|okay|so|well|oh|also|and|but|anyway|actually|sorry|no|wait|hmm)\b[\s,]*)+", re.I
)
_CONTRACTIONS = [
    (re.compile(p, re.I), r)
    for p, r in [
        (r"\bwon't\b", "will not"),
        (r"\bcan't\b", "can not"),
        (r"n't\b", " not"),
        (r"\bI'm\b", "I am"),
        (r"'ve\b", " have"),
        (r"'re\b", " are"),
        (r"\bany more\b", "anymore"),
    ]
]
_STOPPED = {
    "working": "work",
    "living": "live",
    "liking": "like",
    "loving": "love",
    "enjoying": "enjoy",
    "reporting": "report",
}
#: (wording taken away, what it says): "no longer" ends; "not ... anymore" ends, a plain "not"
#: or "never" corrects; "used to" and "stopped ...ing" end.
_TURNS: list[tuple[re.Pattern[str], str | None, FactOp]] = [
    (re.compile(r"^(.*?)\b(?:am|is|are) no longer\b", re.I), r"\1is", "end"),
    (re.compile(r"^(.*?)\bno longer\b ?", re.I), r"\1", "end"),
    (re.compile(r"^(.*?)\b(?:do|does|did) not (?:ever )?(.*)\banymore\b", re.I), r"\1\2", "end"),
    (re.compile(r"^(.*?)\b(am|is|are) not (.*)\banymore\b", re.I), r"\1\2 \3", "end"),
    (re.compile(r"^(.*?)\bused to be\b", re.I), r"\1is", "end"),
    (re.compile(r"^(.*?)\bused to\b ?", re.I), r"\1", "end"),
    (
        re.compile(r"^(.*?)\b(?:(?:have|has) )?stopped (working|living|liking|loving|enjoying|reporting)\b", re.I),
        None,
        "end",
    ),
    (re.compile(r"^(.*?)\b(?:do|does|did) not (?:ever )?", re.I), r"\1", "retract"),
    (re.compile(r"^(.*?)\b(am|is|are|was|were) not\b ?", re.I), r"\1\2 ", "retract"),
    (re.compile(r"^(.*?)\bnever\b ?", re.I), r"\1", "retract"),
]
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CLAUSE = re.compile(r"\s*[,;:]\s*|\s+-+\s+")


@dataclass(frozen=True)
class _Read:
    op: FactOp
    pattern: Pattern
    match: re.Match[str]


class RuleExtractor:
    """Sentence patterns to triples, no LLM (see the module docstring for the limits)."""

    # 4: a speaker's "I" is the speaker, "me" an object too; 3: endings and corrections; 2: a time a sentence names,
    # sentences without a fact kept
    version = "rule-4"

    def extract(self, episode: Episode) -> list[Candidate]:
        found, rest = [], []
        for sentence in _SENTENCE.split(episode.raw.strip()):
            candidate = self._match(sentence.strip(), episode)
            if candidate is not None:
                found.append(candidate)
            elif sentence.strip():
                rest.append(sentence.strip())
        if not found:
            return NoneExtractor().extract(episode)
        # The sentences no pattern matched stay recallable, together, as one episodic unit.
        if rest:
            found.append(
                Candidate(
                    kind=MemoryKind.episodic, scope=episode.scope, content=" ".join(rest), valid_at=episode.occurred_at
                )
            )
        return found

    def _match(self, sentence: str, episode: Episode) -> Candidate | None:
        # A time not wholly before the episode (now, this week) does not move a start, nor does
        # one beside a taste; "until X" ends at X.
        window = find_window(sentence, episode.occurred_at)
        before = window is not None and window.end <= episode.occurred_at
        until = window is not None and window.text.lower().startswith("until")
        read = _read(window.outside(sentence) if window is not None else sentence, until)
        if window is not None and (read is None or read.pattern.habit):
            whole = _read(sentence, False)  # a taste keeps its time words
            if whole is not None and whole.pattern.habit:
                read, before = whole, False
        if read is None:
            return None
        subject, value = read.match.groupdict().get("s") or "I", read.match.group("o")
        if subject.lower() in ("i", "me", "my") or value.lower() in ("me", "myself"):
            # The first person is the speaker ("Carol: I report to Dan."), else the subject.
            said_by = speakers(sentence)
            me = said_by[0].name if said_by else episode.scope.subject_id
            subject = me if subject.lower() in ("i", "me", "my") else subject
            value = me if value.lower() in ("me", "myself") else value  # "Bob reports to me."
        valid_at = invalid_at = None
        if read.op == "end":
            named = window is not None and (until or window.start <= episode.occurred_at)  # "until" may look ahead
            invalid_at = window.start if window is not None and named else episode.occurred_at
        elif read.op == "assert":
            valid_at = window.start if window is not None and before and not read.pattern.habit else episode.occurred_at
        return Candidate(
            kind=MemoryKind.semantic,
            scope=episode.scope,
            content=sentence,
            valid_at=valid_at,
            invalid_at=invalid_at,
            triple=Triple(
                subject=subject,
                predicate=read.pattern.predicate,
                object=value,
                single_valued=read.pattern.single,
            ),
            op=read.op,
        )


def _read(sentence: str, until: bool) -> _Read | None:
    """What the sentence does to which fact, from its clauses: the first that holds a fact,
    corrected when another clause says it was wrong."""
    text = sentence.replace("\u2019", "'")
    for contraction, replacement in _CONTRACTIONS:
        text = contraction.sub(replacement, text)
    clauses = [c for c in _CLAUSE.split(text.strip().rstrip(".!")) if c]
    corrected = any(_CORRECTION.match(_FILLER.sub("", c).strip()) for c in clauses)
    for clause in clauses:
        clause = _FILLER.sub("", clause).strip()
        if _CORRECTION.match(clause):
            continue
        found = _fact(clause)
        if found is None:
            continue
        op, pattern, match = found
        if op == "assert" and (pattern.past or pattern.ends or until):
            op = "end"
        if op == "end" and corrected and not (pattern.ends or until):
            op = "retract"  # "That's wrong, I don't work there any more" still says it never was
        return _Read(op, pattern, match)
    return None


def _fact(clause: str) -> tuple[FactOp, Pattern, re.Match[str]] | None:
    """The fact a clause states once its turn ("no longer", "never", ...) is taken away."""
    op: FactOp = "assert"
    for turn, replacement, says in _TURNS:
        m = turn.match(clause)
        if m is None:
            continue
        if replacement is None:  # "stopped working at" -> "work at"
            clause = m.group(1) + _STOPPED[m.group(2).lower()] + clause[m.end() :]
        else:
            clause = m.expand(replacement) + clause[m.end() :]
        clause = re.sub(r"\s+", " ", clause).strip()
        op = says
        break
    for pattern in PATTERNS:
        m = pattern.regex.match(clause)
        if m:
            return op, pattern, m
    return None
