// mode: read
// params: frontier, scopes, kinds, s, t_lo, t_hi, vector, prop, fanout, decay, fused, seen, limit
// One hop of a walk: from each frontier unit through the entities it is about to units not
// seen yet with an entry visible at (s, t), at most fanout per entity (hub safety). A reached
// unit scores its parent's score times decay plus its own fused score from the direct search;
// the best path to each is kept, and the limit best come back as seen at system time s.
UNWIND $frontier AS f
MATCH (u:Unit {id: f.id})-[:ABOUT]->(entity:Entity)
CALL (entity, u) {
  MATCH (entity)<-[:ABOUT]-(n:Unit) WHERE n <> u AND NOT n.id IN $seen
  MATCH (e:Entry {unit_id: n.id})
  WHERE e:SearchEntry AND e.scope IN $scopes AND e.s_from <= $s AND e.s_to > $s
    AND e.t_from < $t_hi AND e.t_to > $t_lo AND (size($kinds) = 0 OR e.kind IN $kinds)
  RETURN n, e LIMIT $fanout
}
WITH f, entity, n, e, f.score * $decay + coalesce($fused[n.id], 0.0) AS score
ORDER BY score DESC, f.id, entity.name
WITH n, head(collect({source: f.id, via: entity.name, score: score, entry: e})) AS best
ORDER BY best.score DESC, n.id LIMIT $limit
OPTIONAL MATCH (st:Usage {unit_id: n.id})
RETURN best.source AS source, best.via AS via, best.score AS score,
       n {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: st.last_recalled_at, recall_count: st.recall_count} AS unit,
       best.entry.t_to AS t_to, best.entry.expired_at AS expired_at,
       CASE WHEN $vector IS NULL OR best.entry[$prop] IS NULL THEN null
            ELSE vector.similarity.cosine(best.entry[$prop], $vector) END AS similarity
ORDER BY score DESC, n.id
