// mode: read
// params: scopes, kinds, near, index_name, prop, vector_fetch, exact, s, t_lo, t_hi, fetch
// include: recall/fused
// One recall in one statement on Neo4j 5.26, whose vector index cannot filter: what the lists
// read (recall/asked: the question, without the names of its speakers); the semantic
// list over-fetched from the index and filtered by scope, kind and both time axes after it,
// or (exact) an exact cosine scan of a small scope; the time list's candidates are those of
// them near the time a question names (graphmem.entries.near); then the shared lexical,
// entity and fusion steps.
{{include recall/asked}}
CALL (asked) {
  CALL (asked) {
    WITH asked.vector AS v WHERE v IS NOT NULL AND NOT $exact
    CALL db.index.vector.queryNodes($index_name, $vector_fetch, v) YIELD node AS e, score
    WHERE e.scope IN $scopes AND (size($kinds) = 0 OR e.kind IN $kinds)
      AND e.s_from <= $s AND e.s_to > $s AND e.t_from < $t_hi AND e.t_to > $t_lo
    RETURN e, score
    UNION
    WITH asked.vector AS v WHERE v IS NOT NULL AND $exact
    UNWIND $scopes AS sc
    MATCH (e:SearchEntry) WHERE e.scope = sc AND e.t_from < $t_hi
      AND e.s_from <= $s AND e.s_to > $s AND e.t_to > $t_lo AND (size($kinds) = 0 OR e.kind IN $kinds)
    RETURN e, vector.similarity.cosine(e[$prop], v) AS score
  }
  WITH e, score ORDER BY score DESC, e.unit_id
  // one row, even with no vector list: the lists after it read asked
  RETURN collect({id: e.unit_id, score: score, kind: e.kind, t_from: e.t_from, t_to: e.t_to}) AS found
}
WITH asked, [f IN found[0..$fetch] | {id: f.id, score: f.score}] AS semantic,
     [f IN found WHERE any(r IN $near WHERE f.kind IN r.kinds AND f.t_from >= r.from_lo AND f.t_from < r.from_hi
                                             AND f.t_to > r.to_lo)
        | {id: f.id, score: f.score, t_from: f.t_from, t_to: f.t_to,
           event: head([r IN $near WHERE f.kind IN r.kinds | r.event])}][0..$fetch] AS near
