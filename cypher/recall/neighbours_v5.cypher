// mode: read
// params: vectors, index_name, fetch, scope, s, t, k
// The k nearest units visible at (t, s) to each of several vectors on Neo4j 5.26: each
// over-fetched from the vector index and filtered after it.
UNWIND range(0, size($vectors) - 1) AS i
CALL (i) {
  CALL db.index.vector.queryNodes($index_name, $fetch, $vectors[i]) YIELD node AS e, score
  WHERE e.scope = $scope AND e.s_from <= $s AND e.s_to > $s AND e.t_from <= $t AND e.t_to > $t
  RETURN e.unit_id AS id, score ORDER BY score DESC LIMIT $k
}
RETURN i, id, score
ORDER BY i, score DESC, id
