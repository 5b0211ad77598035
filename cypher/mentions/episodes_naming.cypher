// mode: read
// params: query, skip, limit
// One page of the episodes whose raw text holds a name the scope just learnt (the query: the
// names as Lucene phrases, restricted to the scope by its token), to be checked and linked.
CALL db.index.fulltext.queryNodes('episode_text', $query, {skip: $skip, limit: $limit}) YIELD node
RETURN node.id AS id, node.raw AS text
