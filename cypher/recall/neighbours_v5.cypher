// mode: read
// params: vectors, index_name, fetch, scope, k
// recall/neighbours on Neo4j 5.26, whose vector index cannot filter: each vector's
// neighbours over-fetched from the index and filtered after it.
UNWIND range(0, size($vectors) - 1) AS i
CALL (i) {
  CALL db.index.vector.queryNodes($index_name, $fetch, $vectors[i]) YIELD node AS e, score
  WHERE e.scope = $scope AND {{include recall/entry_visible}}
  RETURN e.unit_id AS id, score ORDER BY score DESC LIMIT $k
}
RETURN i, id, score
ORDER BY i, score DESC, id
