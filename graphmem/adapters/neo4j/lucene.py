"""Lucene queries built from plain words, for Neo4j's fulltext indexes.

Words are ``\\w+`` runs, lower-cased (``graphmem.domain.models.words``; lexical terms may also hold an
apostrophe inside, ``graphmem.domain.models.terms``, which Lucene reads as text), so no user character
can reach Lucene syntax (quotes, colons, parentheses, backslashes, AND/OR/NOT operators) and
nothing can raise. Every query is restricted to scopes by the scope tokens indexed beside the text.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphmem.domain.models import Scope

#: Lucene refuses queries with more than 1024 clauses; a query never needs this many words.
MAX_QUERY_WORDS = 64


def lucene_query(terms: Sequence[str], scopes: Sequence[Scope], field: str) -> str | None:
    """The words (the first ``MAX_QUERY_WORDS`` distinct ones) as a query on ``field`` restricted
    to ``scopes``; None when there are none."""
    unique = list(dict.fromkeys(terms))[:MAX_QUERY_WORDS]
    if not unique:
        return None
    tokens = " ".join(s.token for s in scopes)
    return f"+scope_token:({tokens}) +{field}:({' '.join(unique)})"


#: Phrases per query: each is one clause, well below Lucene's 1024.
MAX_QUERY_PHRASES = 500


def lucene_phrases(phrases: Sequence[Sequence[str]], scope: Scope, field: str) -> list[str]:
    """Queries for texts in ``scope`` holding any of the phrases (each a name's words, in
    order), ``MAX_QUERY_PHRASES`` a query."""
    quoted = list(dict.fromkeys(f'"{" ".join(p[:MAX_QUERY_WORDS])}"' for p in phrases if p))
    return [
        f"+scope_token:({scope.token}) +{field}:({' '.join(quoted[i : i + MAX_QUERY_PHRASES])})"
        for i in range(0, len(quoted), MAX_QUERY_PHRASES)
    ]
