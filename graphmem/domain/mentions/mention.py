"""A mention: a named thing found in a text, where it stands and how it was found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphmem.domain.tokenise import normalise

#: How a name was found: as a speaker, as a proper name, as a name the scope has seen written
#: so (known), or only because a fact is about it (fact).
Kind = Literal["speaker", "known", "fact", "proper"]


@dataclass(frozen=True)
class Mention:
    """A named thing in a text: ``text[start:end] == name``."""

    name: str  # as written, clitic stripped
    norm: str  # normalise(name): the entity identity
    start: int
    end: int
    kind: Kind


def mention_at(text: str, start: int, end: int, kind: Kind) -> Mention:
    """The mention of ``text[start:end]``."""
    name = text[start:end]
    return Mention(name=name, norm=normalise(name), start=start, end=end, kind=kind)
