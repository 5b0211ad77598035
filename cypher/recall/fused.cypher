// mode: fragment
// params: scopes, kinds, lucene, entity_lucene, words, window, margin, s, t_lo, t_hi, fetch, lexical_fetch, k, rrf_k, weights, seeds, fanout
// The end both recall statements share, after their semantic list: the lexical and
// named-entity lists filtered right after their index calls; the time list (units told or
// true in or near the window the question names, closest first, from range seeks); reciprocal
// rank fusion (ties share a rank); the k best units as seen at system time s, with the entry
// showing them.
CALL () {
  WITH $lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entry_text', q, {limit: $lexical_fetch}) YIELD node, score
  WHERE node.s_from <= $s AND node.s_to > $s AND node.t_from < $t_hi AND node.t_to > $t_lo
    AND (size($kinds) = 0 OR node.kind IN $kinds)
  WITH node.unit_id AS id, score ORDER BY score DESC, id LIMIT $fetch
  RETURN collect({id: id, score: score}) AS lexical
}
CALL () {
  WITH $entity_lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_names', q, {limit: 50}) YIELD node, score
  WITH collect({entity: node, score: score, named: all(w IN node.words WHERE w IN $words)}) AS found
  UNWIND (CASE WHEN any(f IN found WHERE f.named) THEN [f IN found WHERE f.named] ELSE found END)[0..$seeds] AS f
  // An entity named everywhere (a chat's speaker) says less about which unit is meant.
  WITH f.entity AS entity, f.score AS score
  WITH entity, score * log(2) / log(1 + COUNT { (entity)<-[:ABOUT|MENTIONS]-() }) AS score
  CALL (entity) {
    MATCH (entity)<-[:ABOUT|MENTIONS]-(u:Unit)
    MATCH (e:Entry {unit_id: u.id})
    WHERE e:SearchEntry AND e.s_from <= $s AND e.s_to > $s AND e.t_from < $t_hi AND e.t_to > $t_lo
      AND (size($kinds) = 0 OR e.kind IN $kinds)
    RETURN u.id AS id LIMIT $fanout
  }
  WITH id, max(score) AS score ORDER BY score DESC, id LIMIT $fetch
  RETURN collect({id: id, score: score}) AS entities
}
CALL () {
  WITH $window AS w WHERE w IS NOT NULL
  UNWIND $scopes AS sc
  CALL (sc, w) {
    MATCH (e:SearchEntry) WHERE e.scope = sc AND e.occurred >= w[0] - $margin AND e.occurred < w[1] + $margin
    RETURN e
    UNION
    MATCH (e:SearchEntry) WHERE e.scope = sc AND e.t_from >= w[0] - $margin AND e.t_from < w[1] + $margin
    RETURN e
  }
  WITH e, w WHERE e.s_from <= $s AND e.s_to > $s AND e.t_from < $t_hi AND e.t_to > $t_lo
    AND (size($kinds) = 0 OR e.kind IN $kinds)
  UNWIND [e.occurred, e.t_from] AS x
  WITH e.unit_id AS id, CASE WHEN x < w[0] THEN w[0] - x WHEN x >= w[1] THEN x - w[1] + 1 ELSE 0 END AS distance
  WITH id, min(distance) AS distance ORDER BY distance, id LIMIT $fetch
  RETURN collect({id: id, score: -distance}) AS timed
}
UNWIND [['semantic', semantic], ['lexical', lexical], ['entities', entities], ['time', timed]] AS list
UNWIND range(0, size(list[1]) - 1) AS i
WITH list[0] AS name, list[1] AS hits, i
WITH hits[i].id AS id,
     coalesce($weights[name], 1.0) / ($rrf_k + 1 + size([j IN range(0, i) WHERE hits[j].score > hits[i].score])) AS part
WITH id, sum(part) AS score
ORDER BY score DESC, id LIMIT $k
MATCH (u:Unit {id: id})
MATCH (e:Entry {unit_id: id}) WHERE e.s_from <= $s AND e.s_to > $s
OPTIONAL MATCH (st:Usage {unit_id: id})
RETURN u {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: st.last_recalled_at, recall_count: st.recall_count} AS unit,
       score, e.t_to AS t_to, e.expired_at AS expired_at
ORDER BY score DESC, id
