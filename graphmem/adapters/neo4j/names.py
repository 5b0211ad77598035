"""The mention graph inside a transaction: the scope's names lock, the names a scope knows, the
texts that may name them, and the links from units and episodes to the entities they name.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Sequence

from neo4j import ManagedTransaction

from graphmem.adapters.neo4j.driver import run
from graphmem.adapters.neo4j.lucene import lucene_phrases
from graphmem.adapters.neo4j.rows import mention_rows, scope_props
from graphmem.domain.mentions import Named, edge_words, runs_in
from graphmem.domain.models import Scope, TextsRead, entity_ids, utcnow, words

#: Entries read per page when names become known (every page is read: links must not depend
#: on the order texts arrived in).
TEXTS_PAGE = 10_000
#: Entity ids per known-names lookup.
NAME_IDS = 20_000


def names_key(scope: Scope) -> str:
    """The key of the scope's names lock (``UnitStore.commit``; a commit takes it first)."""
    return "names:" + scope.key


def texts_changed(tx: ManagedTransaction, scopes: Iterable[Scope]) -> None:
    """Count a change to which texts a search finds, made outside a commit, on each scope's
    names lock, held until ``tx`` ends (``TextsRead``; take it first, before other locks)."""
    rows = [{"key": names_key(s), "scope_props": scope_props(s)} for s in sorted(set(scopes), key=names_key)]
    if rows:
        run(tx, "mentions/texts_changed", rows=rows)


def known_names_in(tx: ManagedTransaction, scope: Scope, texts: Collection[str]) -> dict[str, bool]:
    """The names of the scope's entities that the texts hold, each with whether a fact names it."""
    # Nearly every word run of a text is no name (97% of those of the facts of
    # benchmarks/graphiti): first the words that begin or end some name of the scope, then
    # only the runs that begin and end so, read and looked up by id (there, 6,500 index
    # seeks instead of 29,000, and a tenth of the runs read).
    asked = sorted({word for text in texts for word in edge_words(text)})
    firsts, lasts = set(), set()
    for start in range(0, len(asked), NAME_IDS):
        found = run(tx, "mentions/name_edges", scope=scope.key, words=asked[start : start + NAME_IDS])[0]
        firsts.update(found["firsts"])
        lasts.update(found["lasts"])
    ids = sorted(entity_ids(scope, runs_in(texts, (firsts, lasts))))
    return {
        r["name"]: r["fact"]
        for start in range(0, len(ids), NAME_IDS)
        for r in run(tx, "mentions/known_names", ids=ids[start : start + NAME_IDS])
    }


def texts_naming(
    tx: ManagedTransaction,
    scope: Scope,
    anchors: Sequence[tuple[str, bool]],
    version: int = 0,
    last: str | None = None,
) -> TextsRead:
    """The texts of the scope's units and episodes that hold the words of one of these names
    in order (a superset of those that name them).

    - Units by the text index, and archived ones (which left it) read beside it.
    - Searched first: a unit archived meanwhile is found by one of the two reads; one restored
      meanwhile counts as a change of the texts.
    """
    phrases = [words(name) for name, _ in anchors]
    found = _searched(tx, "mentions/texts_naming", lucene_phrases(phrases, scope, "text"))
    found.update((r["id"], r["text"]) for r in run(tx, "mentions/archived_texts", scope=scope.key))
    episodes = _searched(tx, "mentions/episodes_naming", lucene_phrases(phrases, scope, "raw"))
    return TextsRead(version=version, last=last, found=found, episodes=episodes)


def _searched(tx: ManagedTransaction, query_name: str, queries: Sequence[str]) -> dict[str, str]:
    """Owner id -> text of every hit of the fulltext queries, page by page."""
    found: dict[str, str] = {}
    for query in queries:
        for skip in itertools.count(0, TEXTS_PAGE):
            page = run(tx, query_name, query=query, skip=skip, limit=TEXTS_PAGE)
            found.update((r["id"], r["text"]) for r in page)
            if len(page) < TEXTS_PAGE:
                break
    return found


def link_mentions(tx: ManagedTransaction, scope: Scope, units: Named, episodes: Named) -> None:
    """Write the links from these units and episodes to the entities they name."""
    at = utcnow()
    for query, mentioned in (("mentions/unit_mentions", units), ("mentions/episode_mentions", episodes)):
        rows = mention_rows(scope, mentioned)
        if rows["rows"]:
            run(tx, query, **rows, scope_props=scope_props(scope), at=at)
