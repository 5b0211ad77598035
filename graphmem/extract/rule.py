"""Rule extractor: common English fact patterns, no LLM.

Each sentence of the episode is matched against the patterns below; a match becomes a semantic
candidate with a (subject, predicate, object) triple, so the policy can supersede it and recall
can walk it. ``I``/``my`` resolve to the scope's subject id.

Limits (by design, documented in the README): English only; one fact per sentence; no
coreference beyond I/me/my ("he", "she", "they" are kept as written); negation is understood
only in the "no longer / not ... anymore" retraction forms; anything unmatched is not lost: an
episode with no matching sentence becomes one episodic unit, as with ``--extractor none``, and
the sentences without a fact in one that has some become one episodic unit together.
"""

from __future__ import annotations

import re

from ..models import Candidate, Episode, MemoryKind, Triple
from ..timewords import find_window
from . import NoneExtractor

_NAME = r"(?P<s>I|[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
_OBJ = r"(?P<o>[\w'-]+(?: [\w'-]+){0,5}?)"
_END = r"\s*(?:now|today|recently|last \w+|this \w+|again)?\s*[.!]?$"

#: (pattern, predicate, single_valued, retract)
PATTERNS: list[tuple[re.Pattern[str], str, bool, bool]] = [
    (re.compile(rf"^{_NAME} (?:no longer|don't|doesn't|do not|does not) (?:live|lives) in {_OBJ}(?: anymore)?{_END}", re.I), "lives_in", True, True),
    (re.compile(rf"^{_NAME} (?:(?:have |has )?moved|relocated) to {_OBJ}{_END}", re.I), "lives_in", True, False),
    (re.compile(rf"^{_NAME} (?:live|lives|am living|is living) in {_OBJ}{_END}", re.I), "lives_in", True, False),
    (re.compile(rf"^{_NAME} (?:no longer|don't|doesn't) work (?:at|for) {_OBJ}(?: anymore)?{_END}", re.I), "works_at", True, True),
    (re.compile(rf"^{_NAME} (?:work|works|am working|is working|started working) (?:at|for) {_OBJ}{_END}", re.I), "works_at", True, False),
    (re.compile(rf"^{_NAME} (?:report|reports) to {_OBJ}{_END}", re.I), "reports_to", True, False),
    (re.compile(rf"^(?:my|{_NAME}'s) (?:manager|boss) is {_OBJ}{_END}", re.I), "reports_to", True, False),
    (re.compile(rf"^(?:my name is|I am called|I'm called) {_OBJ}{_END}", re.I), "name", True, False),
    (re.compile(rf"^{_NAME} (?:am|is|are) married to {_OBJ}{_END}", re.I), "married_to", True, False),
    (re.compile(rf"^{_NAME} (?:am|is) allergic to {_OBJ}{_END}", re.I), "allergic_to", False, False),
    (re.compile(rf"^{_NAME} (?:like|likes|love|loves|enjoy|enjoys) {_OBJ}{_END}", re.I), "likes", False, False),
]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class RuleExtractor:
    """Sentence patterns to triples, no LLM (see the module docstring for the limits)."""

    version = "rule-2"  # 2: a time a sentence names, sentences without a fact kept

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
            found.append(Candidate(kind=MemoryKind.episodic, scope=episode.scope, content=" ".join(rest),
                                   valid_at=episode.occurred_at))
        return found

    def _match(self, sentence: str, episode: Episode) -> Candidate | None:
        # A time the sentence names ("I moved to Berlin last month.", "... in March 2024.")
        # says when a state of one value began, read from when the episode happened; those
        # patterns match the sentence without it. A time not wholly before the episode (now,
        # this week) does not move it, nor does one beside a taste ("I like tea in summer" is
        # a habit, not when the liking began).
        window = find_window(sentence, episode.occurred_at)
        began = window.start if window is not None and window.end <= episode.occurred_at else episode.occurred_at
        bare = window.outside(sentence) if window is not None else sentence
        for pattern, predicate, single, retract in PATTERNS:
            m = pattern.match(bare if single else sentence)
            if not m:
                continue
            subject = m.groupdict().get("s") or "I"
            if subject.lower() in ("i", "me", "my"):
                subject = episode.scope.subject_id
            return Candidate(
                kind=MemoryKind.semantic,
                scope=episode.scope,
                content=sentence,
                valid_at=began if single else episode.occurred_at,
                triple=Triple(subject=subject, predicate=predicate, object=m.group("o"), single_valued=single),
                retract=retract,
            )
        return None
