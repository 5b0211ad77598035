// mode: read
// params: frontier, scopes, kinds, s, t_lo, t_hi, vector, prop, fanout, seen, limit, words
// One hop of a walk: from each frontier unit through the entities it is about or names (those
// linked to at most fanout units: hub safety; and not named by the question, whose words are
// $words: its own units are the direct search's to find, a hop bridges to what it does not
// name) to units not seen yet with an entry visible at (s, t).
// A reached unit is ranked by how well the path answers the question: the cosine between the
// question and the sum of the two units' vectors, from the three pairwise cosines (vectors are
// unit length), times the entity's specificity (1 / log2(1 + the units linked to it)), halved
// when the path starts from a unit that names none of the question's entities: a walk leads
// from what the question names to what that leads to, and the same pair read backwards (the
// answer back to the unit that named the bridge) would tie with it. The best
// path to each unit is kept, and the limit best come back as seen at system time s.
// Each vector is read and compared with the question once (a frontier unit's before its
// entities are expanded, a reached unit's once for all its paths): vector reads and cosines
// are most of a hop's cost.
UNWIND $frontier AS f
MATCH (u:Unit {id: f})
OPTIONAL MATCH (pe:Entry {unit_id: f}) WHERE pe.s_from <= $s AND pe.s_to > $s
WITH f, u, pe[$prop] AS fv,
     CASE WHEN EXISTS { MATCH (u)-[:ABOUT|MENTIONS]->(q:Entity)
                        WHERE size(q.words) > 0 AND all(w IN q.words WHERE w IN $words) } THEN 1.0 ELSE 0.5 END AS anchor
WITH f, u, fv, anchor, CASE WHEN fv IS NULL OR $vector IS NULL THEN null
                            ELSE 2 * vector.similarity.cosine(fv, $vector) - 1 END AS fq
MATCH (u)-[:ABOUT|MENTIONS]->(entity:Entity)
// An entity linked to more units than fanout is not walked through: which of them would be
// read is arbitrary (a chat's speaker is named in every turn).
WITH f, u, fv, fq, anchor, entity, COUNT { (entity)<-[:ABOUT|MENTIONS]-() } AS linked
WHERE linked <= $fanout AND NOT (size(entity.words) > 0 AND all(w IN entity.words WHERE w IN $words))
WITH f, u, fv, fq, entity, anchor * log(2) / log(1 + linked) AS specificity
CALL (entity, u) {
  MATCH (entity)<-[:ABOUT|MENTIONS]-(n:Unit) WHERE n <> u AND NOT n.id IN $seen
  MATCH (e:Entry {unit_id: n.id})
  WHERE e:SearchEntry AND e.scope IN $scopes AND e.s_from <= $s AND e.s_to > $s
    AND e.t_from < $t_hi AND e.t_to > $t_lo AND (size($kinds) = 0 OR e.kind IN $kinds)
  RETURN n, e LIMIT $fanout
}
WITH n, e, e[$prop] AS nv, collect({source: f, via: entity.name, fv: fv, fq: fq, specificity: specificity}) AS paths
WITH n, e, nv, paths, CASE WHEN nv IS NULL OR $vector IS NULL THEN null
                           ELSE 2 * vector.similarity.cosine(nv, $vector) - 1 END AS nq
UNWIND paths AS p
WITH n, e, p, CASE WHEN nq IS NULL OR p.fq IS NULL THEN null
                   ELSE (p.fq + nq) / sqrt(2 + 2 * (2 * vector.similarity.cosine(p.fv, nv) - 1) + 1e-9) END AS similarity
WITH n, e, p, similarity, coalesce(similarity, 1.0) * p.specificity AS score
ORDER BY score DESC, p.source, p.via
WITH n, head(collect({source: p.source, via: p.via, score: score, similarity: similarity, entry: e})) AS best
ORDER BY best.score DESC, n.id LIMIT $limit
OPTIONAL MATCH (st:Usage {unit_id: n.id})
RETURN best.source AS source, best.via AS via, best.score AS score, best.similarity AS similarity,
       n {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: st.last_recalled_at, recall_count: st.recall_count} AS unit,
       best.entry.t_to AS t_to, best.entry.expired_at AS expired_at
ORDER BY score DESC, n.id
