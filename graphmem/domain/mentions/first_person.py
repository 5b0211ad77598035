"""A person's own words as search reads them: in a user subject's memory, "I" is that user.

"I moved to Berlin last month." stored for ``user:alice`` is searched as "alice moved to Berlin
last month.", so a question that names her ("where does alice live?") finds it by its words and
by its vector (MiniLM: similarity 0.70 against 0.20 for the words as said). The unit keeps its
words as said; only what search reads of it (its entry text and its vector) changes. Only in
what the user said (the "chat" channel: a document's "I" is its author's), when the subject's
id reads as a name (letters, up to four words: not an opaque id) and the text names no speaker
("Bob: I ..." is Bob's first person, not the subject's).
"""

from __future__ import annotations

import regex

from graphmem.domain.mentions.written import speakers

#: A subject id that reads as a person's name: letters, up to four words.
_NAME = regex.compile(r"\p{L}+(?:[ .'’-]\p{L}+){0,3}")
#: The first person, "I" in capitals only ("i" alone is rarely the pronoun in stored text).
_FIRST = regex.compile(
    r"\b(?:(?<pronoun>I)(?!\.\w)(?:['’](?<clitic>m|ve|d|ll))?|(?i:(?<object>me|myself)|(?<owner>my|mine)))\b"
)
_CLITICS = {"m": "is", "ve": "has", "d": "would", "ll": "will"}


#: The channel of what a user says themself.
SAID = "chat"


def as_named(text: str, subject_type: str, subject_id: str, channel: str = SAID) -> str:
    """``text`` with its first person as the subject's name, when a user said it, their id reads
    as a name and the text names no speaker; else ``text`` itself."""
    if channel != SAID or subject_type != "user" or not _NAME.fullmatch(subject_id) or speakers(text):
        return text

    def named(m: regex.Match[str]) -> str:
        if m.group("owner"):
            return f"{subject_id}'s"
        if m.group("clitic"):
            return f"{subject_id} {_CLITICS[m.group('clitic').casefold()]}"
        return subject_id

    return _FIRST.sub(named, text)
