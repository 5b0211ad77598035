"""Lucene queries built from plain words, for Neo4j's fulltext indexes.

Words are ``\\w+`` runs, lower-cased (``graphmem.models.words``), so no user character can reach
Lucene syntax (quotes, colons, parentheses, backslashes, AND/OR/NOT operators) and nothing can
raise. Every query is restricted to scopes by the scope tokens indexed beside the text.
"""

from __future__ import annotations

from typing import Sequence

from ..models import Scope

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


def lucene_words(terms: Sequence[str], scope: Scope, field: str) -> str | None:
    """``lucene_query`` for one scope."""
    return lucene_query(terms, [scope], field)


def lucene_chunks(terms: Sequence[str], scope: Scope, field: str) -> list[str]:
    """Queries covering every distinct word, ``MAX_QUERY_WORDS`` at a time."""
    unique = list(dict.fromkeys(terms))
    return [q for i in range(0, len(unique), MAX_QUERY_WORDS)
            if (q := lucene_words(unique[i:i + MAX_QUERY_WORDS], scope, field))]
