// mode: read
// params: scopes, kinds, near, index_name, prop, vector_fetch, exact, fetch
// include: recall/fused
// recall/hybrid on Neo4j 5.26, whose vector index cannot filter: what the lists read
// (recall/asked); the semantic list over-fetched from the index and filtered after it, or
// (exact) an exact cosine scan of a small scope; the time list's candidates are those of them
// near the time a question names (graphmem.domain.entries.near); then the shared end
// (recall/fused).
{{include recall/asked}}
CALL (asked) {
  CALL (asked) {
    WITH asked.vector AS v WHERE v IS NOT NULL AND NOT $exact
    CALL db.index.vector.queryNodes($index_name, $vector_fetch, v) YIELD node AS e, score
    WHERE e.scope IN $scopes AND (size($kinds) = 0 OR e.kind IN $kinds) AND {{include recall/entry_visible}}
    RETURN e, score
    UNION
    WITH asked.vector AS v WHERE v IS NOT NULL AND $exact
    UNWIND $scopes AS sc
    MATCH (e:SearchEntry)
    WHERE e.scope = sc AND (size($kinds) = 0 OR e.kind IN $kinds) AND {{include recall/entry_visible}}
    RETURN e, vector.similarity.cosine(e[$prop], v) AS score
  }
  WITH e, score ORDER BY score DESC, e.unit_id
  // one row, even with no vector list: the lists after it read asked
  RETURN collect({id: e.unit_id, score: score, kind: e.kind, t_from: e.t_from, t_to: e.t_to}) AS found
}
WITH asked, [f IN found[0..$fetch] | {id: f.id, score: f.score}] AS semantic,
     [e IN found WHERE any(rule IN $near WHERE e.kind IN rule.kinds AND {{include recall/entry_near}})
        | {id: e.id, score: e.score, t_from: e.t_from, t_to: e.t_to,
           event: head([rule IN $near WHERE e.kind IN rule.kinds | rule.event])}][0..$fetch] AS near
