// mode: read
// params: vectors, scope, s, t, k
// values: index:name
// The k nearest units visible at (t, s) to each of several vectors, in one statement
// (Neo4j 2026.01+): the write pipeline's neighbours by meaning.
CYPHER 25
UNWIND range(0, size($vectors) - 1) AS i
CALL (i) {
  MATCH (e:SearchEntry)
    SEARCH e IN (VECTOR INDEX {{index}} FOR $vectors[i]
      WHERE e.scope = $scope AND e.s_from <= $s AND e.s_to > $s AND e.t_from <= $t AND e.t_to > $t
      LIMIT $k) SCORE AS score
  RETURN e.unit_id AS id, score
}
RETURN i, id, score
ORDER BY i, score DESC, id
