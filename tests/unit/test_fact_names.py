"""A fact's names (subject, predicate, object) show every character they hold: two entities
must not look alike."""

from __future__ import annotations

import regex
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphmem.domain.models import Fact
from graphmem.pipelines.export_check import parse

#: What shows as nothing: controls, format characters, surrogates, private-use and unassigned
#: code points (all of \p{C}), line and paragraph separators, default-ignorable code points,
#: and the replacement character (bytes that were not text).
SHOWS_AS_NOTHING = regex.compile(r"[\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\ufffd]")


@given(st.text(min_size=1, max_size=12), st.sampled_from(["subject", "predicate", "object"]))
def test_a_name_a_fact_accepts_shows_every_character(name, field):
    names = {"subject": "Alice", "predicate": "lives_in", "object": "Lisbon", field: name}
    try:
        Fact(**names)
    except ValidationError:
        assert SHOWS_AS_NOTHING.search(name) or not name.strip()
        return
    assert not SHOWS_AS_NOTHING.search(name)


def test_an_import_replays_the_fact_names_an_export_holds():
    """An export of a store written before the check may hold such a name: importing it
    replays the record as it was stored."""
    record = {
        "type": "episode",
        "scope": "user:alice",
        "id": "ep-1",
        "occurred_at": "2024-01-01T00:00:00Z",
        "raw": "Alice lives in Paris",
        "channel": "chat",
        "facts": [{"subject": "Ali\u200bce", "predicate": "lives_in", "object": "Paris"}],
    }
    kind, episode = parse(record)
    assert (kind, episode.facts[0].subject) == ("episode", "Ali\u200bce")
