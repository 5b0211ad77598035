// mode: read
// params: query, skip, limit
// One page of the entries whose text holds a name the scope just learnt (the query: the names
// as Lucene phrases, restricted to the scope by its token), to be checked and linked.
CALL db.index.fulltext.queryNodes('entry_text', $query, {skip: $skip, limit: $limit}) YIELD node
RETURN node.unit_id AS id, node.text AS text
