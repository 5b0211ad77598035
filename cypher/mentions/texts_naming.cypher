// mode: read
// params: queries, limit
// Units whose search text shares a word with names the scope just learnt (one Lucene query a
// name, restricted to the scope by its token), to be checked and linked.
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entry_text', q, {limit: $limit}) YIELD node
RETURN DISTINCT node.unit_id AS id, node.text AS text
