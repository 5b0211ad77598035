"""Episodes stored before migration 0018 get their scope's token, by which the episode text
index finds them for a name a write makes known (``Neo4jStore.earlier_texts``), and the links to
the names their scope knows now: a name learnt after an episode was stored linked its units but
not the episode itself, so an episode's links depended on the order things arrived in.

Scope by scope: its episodes are linked page by page (the names each holds among those the
scope knows, ``graphmem.domain.mentions.named_in``), then given the token. An interrupted run does
the scopes still without tokens again; links already drawn are merged, not doubled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.adapters.neo4j.migrations.frozen import known_names, mention_rows, scope_props
from graphmem.domain.mentions import named_in
from graphmem.domain.models import Scope, utcnow

if TYPE_CHECKING:
    from graphmem.adapters.neo4j.driver import Neo4jConnection

PAGE = 1000


def apply(conn: Neo4jConnection) -> list[str]:
    for r in conn.read("mentions/untokened_episode_scopes"):
        scope = Scope(subject_type=r["subject_type"], subject_id=r["subject_id"], project_id=r["project_id"])
        after = ""
        while page := conn.read("mentions/episodes_page", scope=scope.key, after=after, limit=PAGE):
            texts = {p["id"]: p["text"] for p in page}
            known = known_names(conn, scope, list(texts.values()))
            rows = mention_rows(scope, named_in(list(known.items()), texts))
            if rows["rows"]:
                conn.write("mentions/episode_mentions", **rows, scope_props=scope_props(scope), at=utcnow())
            after = page[-1]["id"]
        while conn.write("mentions/tokenise_episodes", scope=scope.key, token=scope.token, limit=PAGE)[0]["tokenised"]:
            pass
    return []
