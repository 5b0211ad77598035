// mode: read
// params: vectors, scope, k
// values: index:name
// The k nearest units visible at (s, [t_lo, t_hi)) to each of several vectors, in one
// statement (Neo4j 2026.01+): the write pipeline's neighbours by meaning. Its twin for 5.26,
// recall/neighbours_v5, differs only in how it reads the vector index.
CYPHER 25
UNWIND range(0, size($vectors) - 1) AS i
CALL (i) {
  MATCH (e:SearchEntry)
    SEARCH e IN (VECTOR INDEX {{index}} FOR $vectors[i]
      WHERE e.scope = $scope AND {{include recall/entry_visible}}
      LIMIT $k) SCORE AS score
  RETURN e.unit_id AS id, score
}
RETURN i, id, score
ORDER BY i, score DESC, id
