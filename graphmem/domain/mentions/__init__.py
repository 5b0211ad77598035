"""Mentions of named things in free text, with no LLM: what links episodes and units to entities.

Three sources, merged by ``mentions``: speakers and proper names the text shows (``written``),
and names the scope already knows (``KnownNames``). A name's identity is its ``normalise``d
form, the norm entity ids are built from; a result depends only on the text and the set of
known names, never on the order names were learnt. The rules and their limits are in
docs/recall.md, "How names are found".
"""

from __future__ import annotations

from collections.abc import Sequence

from graphmem.domain.mentions.common import COMMON
from graphmem.domain.mentions.known import KnownNames, Named, NameMatcher, digest, named_in
from graphmem.domain.mentions.mention import Kind, Mention
from graphmem.domain.mentions.spans import (
    MAX_NAME_WORDS,
    Edges,
    NameIndex,
    edge_words,
    matchable,
    name_edges,
    name_spans,
    names_in,
    runs_in,
)
from graphmem.domain.mentions.written import speakers, written

__all__ = [
    "COMMON",
    "MAX_NAME_WORDS",
    "Edges",
    "Kind",
    "KnownNames",
    "Mention",
    "NameIndex",
    "NameMatcher",
    "Named",
    "digest",
    "edge_words",
    "matchable",
    "mentions",
    "name_edges",
    "name_spans",
    "named_in",
    "names_in",
    "runs_in",
    "speakers",
    "written",
]

# When two sources find the same name at the same place, the kind says how the text itself
# shows it: as a speaker, as a proper name, or only by what the scope knows.
_RANK = {"speaker": 0, "proper": 1, "known": 2, "fact": 2}


def mentions(
    text: str, known: NameMatcher | KnownNames | None = None, shown: Sequence[Mention] | None = None
) -> list[Mention]:
    """Every mention in the text, deduplicated by norm (first occurrence kept), in text order.

    Args:
        text: any free text (a chat turn, a passage).
        known: the scope's known names, matched case-folded anywhere in the text.
        shown: ``written(text)`` when the caller has it already (it is not changed).
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
