// mode: read
// params: scopes, kinds, vector, index_name, prop, vector_fetch, exact, s, t_lo, t_hi, fetch
// include: recall/fused
// One recall in one statement on Neo4j 5.26, whose vector index cannot filter: the semantic
// list over-fetched from the index and filtered by scope, kind and both time axes after it,
// or (exact) an exact cosine scan of a small scope; then the shared lexical, entity and
// fusion steps.
CALL () {
  WITH $vector AS v WHERE v IS NOT NULL AND NOT $exact
  CALL db.index.vector.queryNodes($index_name, $vector_fetch, v) YIELD node AS e, score
  WHERE e.scope IN $scopes AND (size($kinds) = 0 OR e.kind IN $kinds)
    AND e.s_from <= $s AND e.s_to > $s AND e.t_from < $t_hi AND e.t_to > $t_lo
  RETURN e.unit_id AS id, score
  UNION
  WITH $vector AS v WHERE v IS NOT NULL AND $exact
  UNWIND $scopes AS sc
  MATCH (e:SearchEntry) WHERE e.scope = sc AND e.t_from < $t_hi
    AND e.s_from <= $s AND e.s_to > $s AND e.t_to > $t_lo AND (size($kinds) = 0 OR e.kind IN $kinds)
  RETURN e.unit_id AS id, vector.similarity.cosine(e[$prop], v) AS score
}
WITH id, score ORDER BY score DESC, id LIMIT $fetch
WITH collect({id: id, score: score}) AS semantic
