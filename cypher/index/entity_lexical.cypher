// mode: read
// params: lucene, k
// Fulltext search of entity names, scope token included in the Lucene query.
CALL db.index.fulltext.queryNodes('entity_text', $lucene, {limit: $k}) YIELD node, score
RETURN node.id AS id, node.name AS name, score
