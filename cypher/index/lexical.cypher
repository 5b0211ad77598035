// mode: read
// params: lucene, k
// BM25 fulltext search; the Lucene query is built by graphmem from escaped plain words and
// carries the scope token, so only the caller's scope matches.
CALL db.index.fulltext.queryNodes('unit_text', $lucene, {limit: $k}) YIELD node, score
RETURN node.id AS id, score
