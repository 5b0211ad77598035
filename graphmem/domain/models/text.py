"""Text a caller gives: the limits on its length and the checks that keep it storable and
keep names from looking alike."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Annotated

import regex
from pydantic import AfterValidator, Field, ValidationInfo

from graphmem.domain.models.base import is_stored

#: Content longer than this is refused: a memory unit is a fact, not a document dump.
MAX_CONTENT_CHARS = 20_000
#: Raw episode text limit (documents are ingested as episodes, then split by extractors).
MAX_RAW_CHARS = 200_000
#: A subject id or project id: a name, not a text.
MAX_SUBJECT_CHARS = 200
#: An episode id (ids such as ``conv1:D1:3`` or UUIDs are far shorter).
MAX_EPISODE_ID_CHARS = 1_000
#: Where an episode came from (``chat``, ``email``, ...).
MAX_CHANNEL_CHARS = 200
#: A question to recall or assemble for: a question, not a document.
MAX_QUERY_CHARS = 10_000
#: One label of a fact, and how many labels a fact may carry.
MAX_LABEL_CHARS = 200
MAX_LABELS = 64


def unicode_text(value: str) -> str:
    """Text that can be stored: a lone surrogate (``"\\ud800"`` in JSON) is not Unicode text."""
    if value.isascii():  # no surrogate there: checked without encoding a copy
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text holds a lone surrogate (U+{ord(value[exc.start]):04X}): not Unicode text") from None
    return value


def clean_text(limit: int, blank: bool = False) -> Callable[[str], str]:
    """A check of text a user gives: Unicode without NUL, at most ``limit`` characters, not
    blank unless ``blank``; raises ValueError naming what is wrong."""

    def check(value: str) -> str:
        unicode_text(value)
        if "\x00" in value:
            raise ValueError("text contains a NUL byte")
        if not blank and not value.strip():
            raise ValueError("text is empty")
        if len(value) > limit:
            raise ValueError(f"text is {len(value)} characters, over the {limit} limit")
        return value

    return check


#: Unicode categories a name may not hold: control (Cc), format (Cf: zero-width and bidi
#: marks, which make two names look alike) and lone surrogates (Cs).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
#: What a decoder puts for bytes that were not text: two different byte strings would read as
#: one name.
REPLACEMENT = "\ufffd"


def _hidden(value: str) -> str | None:
    """The first control, format, surrogate or replacement character of ``value``, as ``U+XXXX``."""
    found = next((c for c in value if c == REPLACEMENT or unicodedata.category(c) in HIDDEN_CATEGORIES), None)
    return None if found is None else f"U+{ord(found):04X}"


def normal_name(value: str) -> str:
    """A subject or project id as stored: Unicode NFC without surrounding whitespace, so every
    spelling of one name is one scope. Raises ValueError for a control, format or replacement character."""
    value = unicodedata.normalize("NFC", value).strip()
    hidden = _hidden(value)
    if hidden:
        raise ValueError(f"holds the hidden character {hidden} (control, format or undecodable): not allowed in a name")
    return clean_text(MAX_SUBJECT_CHARS)(value)


#: What shows as nothing, or as a blank where none is expected: ``_hidden``'s controls, format
#: characters, surrogates and U+FFFD, and also line and paragraph separators, private-use and
#: unassigned code points and every default-ignorable one (combining grapheme joiner, Hangul
#: fillers, variation selectors...).
_INVISIBLE = regex.compile(r"[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\ufffd]")


def plain_text(limit: int, what: str, blank: bool = False) -> Callable[[str, ValidationInfo], str]:
    """A check of text shown and compared as a name (a fact's subject, predicate or object, an
    episode's channel, a label): ``clean_text`` with nothing invisible in it, which would make a
    second one that looks like the first. Read back (``STORED``), a record keeps what it was
    stored with."""

    def check(value: str, info: ValidationInfo) -> str:
        if not is_stored(info):
            refuse_invisible(value, what)
        return clean_text(limit, blank=blank)(value)

    return check


def refuse_invisible(value: str, what: str) -> None:
    """ValueError when ``value`` holds a character that shows as nothing (``_INVISIBLE``)."""
    found = _INVISIBLE.search(value)
    if found:
        raise ValueError(
            f"holds the hidden character U+{ord(found.group()):04X} (control, format, separator, "
            f"ignorable or undecodable): not allowed in {what}"
        )


#: Scripts whose letters look alike ("а" Cyrillic, "a" Latin, "α" Greek): a name mixing them
#: is how one subject is made to pass for another.
_CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


def refuse_mixed_scripts(value: str, what: str) -> None:
    """ValueError when ``value`` mixes letters of two of ``_CONFUSABLE_SCRIPTS``."""
    scripts = sorted(
        {
            name
            for c in value
            if c.isalpha()
            for name in [unicodedata.name(c, "").split(" ")[0]]
            if name in _CONFUSABLE_SCRIPTS
        }
    )
    if len(scripts) > 1:
        raise ValueError(
            f"mixes {' and '.join(s.title() for s in scripts)} letters, which look alike: write {what} in one script"
        )


def _identifier(value: str) -> str:
    """An episode id: kept as given (ids are compared exactly), but plain text."""
    hidden = _hidden(value)
    if hidden:
        raise ValueError(f"holds the hidden character {hidden} (control, format or undecodable): not allowed in an id")
    return clean_text(MAX_EPISODE_ID_CHARS)(value)


Content = Annotated[str, AfterValidator(clean_text(MAX_CONTENT_CHARS))]
RawText = Annotated[str, AfterValidator(clean_text(MAX_RAW_CHARS))]
Reason = Annotated[str, AfterValidator(clean_text(2_000))]
Name = Annotated[str, AfterValidator(normal_name)]
EpisodeId = Annotated[str, AfterValidator(_identifier)]
Channel = Annotated[str, AfterValidator(plain_text(MAX_CHANNEL_CHARS, "a channel", blank=True))]
Labels = Annotated[
    tuple[Annotated[str, AfterValidator(plain_text(MAX_LABEL_CHARS, "a label"))], ...], Field(max_length=MAX_LABELS)
]
