// mode: read
// params: scopes, kind_ranges, near, vector, s, t_lo, t_hi, fetch
// values: index:name
// include: recall/fused
// One recall in one statement (Neo4j 2026.01+): the semantic list filtered by scope, kind and
// both time axes inside the vector index (the kinds as name ranges: graphmem.entries.kind_ranges);
// the lexical and named-entity lists filtered right after their index calls; the candidates
// of the time list (units near the time a question names: graphmem.entries.near, one
// filtered index call a rule and kind range); then the shared end (recall/fused).
CYPHER 25
CALL () {
  WITH $vector AS v WHERE v IS NOT NULL
  UNWIND $scopes AS sc
  UNWIND $kind_ranges AS kr
  CALL (v, sc, kr) {
    MATCH (e:SearchEntry)
      SEARCH e IN (VECTOR INDEX {{index}} FOR v
        WHERE e.scope = sc AND e.kind >= kr[0] AND e.kind <= kr[1]
          AND e.s_from <= $s AND e.s_to > $s AND e.t_from < $t_hi AND e.t_to > $t_lo
        LIMIT $fetch) SCORE AS score
    RETURN e.unit_id AS id, score
  }
  WITH id, score ORDER BY score DESC, id LIMIT $fetch
  RETURN collect({id: id, score: score}) AS semantic
}
CALL () {
  WITH $vector AS v WHERE v IS NOT NULL
  UNWIND $scopes AS sc
  UNWIND $near AS rule
  UNWIND rule.ranges AS kr
  CALL (v, sc, rule, kr) {
    WITH rule.from_lo AS from_lo, rule.from_hi AS from_hi, rule.to_lo AS to_lo
    MATCH (e:SearchEntry)
      SEARCH e IN (VECTOR INDEX {{index}} FOR v
        WHERE e.scope = sc AND e.kind >= kr[0] AND e.kind <= kr[1] AND e.s_from <= $s AND e.s_to > $s
          AND e.t_from >= from_lo AND e.t_from < from_hi AND e.t_to > to_lo
        LIMIT $fetch) SCORE AS score
    RETURN e, score
  }
  WITH e, score, rule.event AS event ORDER BY score DESC, e.unit_id LIMIT $fetch
  RETURN collect({id: e.unit_id, score: score, t_from: e.t_from, t_to: e.t_to, event: event}) AS near
}
