// mode: read
// params: scopes, calls, near, fetch
// values: index:name
// include: recall/fused
// One recall in one statement (Neo4j 2026.01+): what the lists read (recall/asked: the
// question, without the names of its speakers); the semantic list filtered by scope, kind and
// both time axes inside the vector index (one call a scope and kind range, each range
// [lo, hi, event]: graphmem.domain.entries.vector_calls); the lexical and named-entity lists filtered
// right after their index calls; the candidates of the time list (units near the time a
// question names: graphmem.domain.entries.near), one filtered index call a rule and kind range, or,
// for a rule asking for just the world range, the semantic calls' entries of its kinds (a
// range whose event is not null); then the shared end (recall/fused). Its twin for 5.26,
// recall/hybrid_v5, differs only in how the semantic and time lists read the vector index.
CYPHER 25
{{include recall/asked}}
CALL (asked) {
  WITH asked.vector AS v WHERE v IS NOT NULL
  UNWIND $scopes AS sc
  UNWIND $calls AS kr
  CALL (v, sc, kr) {
    MATCH (e:SearchEntry)
      SEARCH e IN (VECTOR INDEX {{index}} FOR v
        WHERE e.scope = sc AND e.kind >= kr[0] AND e.kind <= kr[1] AND {{include recall/entry_visible}}
        LIMIT $fetch) SCORE AS score
    RETURN e, score
  }
  WITH e, score, kr[2] AS event ORDER BY score DESC, e.unit_id
  // collect() skips the nulls: the entries of the ranges no time rule shares.
  RETURN collect({id: e.unit_id, score: score})[0..$fetch] AS semantic,
         collect(CASE WHEN event IS NOT NULL
                      THEN {id: e.unit_id, score: score, t_from: e.t_from, t_to: e.t_to, event: event} END) AS shared
}
CALL (asked) {
  WITH asked.vector AS v WHERE v IS NOT NULL
  UNWIND $scopes AS sc
  UNWIND $near AS rule
  UNWIND rule.ranges AS kr
  CALL (v, sc, rule, kr) {
    MATCH (e:SearchEntry)
      SEARCH e IN (VECTOR INDEX {{index}} FOR v
        WHERE e.scope = sc AND e.kind >= kr[0] AND e.kind <= kr[1] AND {{include recall/entry_live}}
          AND {{include recall/entry_near}}
        LIMIT $fetch) SCORE AS score
    RETURN e, score
  }
  RETURN collect({id: e.unit_id, score: score, t_from: e.t_from, t_to: e.t_to, event: rule.event}) AS own
}
WITH asked, semantic, shared + own AS near
