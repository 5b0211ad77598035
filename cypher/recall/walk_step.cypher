// mode: fragment
// params: scopes, kinds, vector, prop, fanout, limit, words
// One hop of a walk, inside `CALL (seeds, seen) { ... }`: from each seed ({id, via}: a unit and
// the name of the entity the walk reached it through, null for a direct hit) through the
// entities it is about or names (those linked to at most fanout units: hub safety; not named
// by the question, whose words are $words: its own units are the direct search's to find, a
// hop bridges to what it does not name; and not the seed's via: a path crosses an entity once)
// to units not in `seen` with an entry visible at (s, t). Returns `reached`: the limit best
// paths, best first, one a unit ({id, source, via, score, similarity}).
// A reached unit is ranked by how well the path answers the question: the cosine between the
// question and the sum of the two units' vectors, from the three pairwise cosines (vectors are
// unit length), times the entity's specificity (1 / log2(1 + the units linked to it)), halved
// when the path starts from a unit that names none of the question's entities: a walk leads
// from what the question names to what that leads to, and the same pair read backwards (the
// answer back to the unit that named the bridge) would tie with it.
// Each vector is read and compared with the question once (a seed's before its entities are
// expanded, a reached unit's once for all its paths): vector reads and cosines are most of a
// hop's cost.
UNWIND seeds AS seed
WITH seed.id AS f, seed.via AS came, seen
MATCH (u:Unit {id: f})
OPTIONAL MATCH (e:Entry {unit_id: f}) WHERE {{include recall/entry_live}}
WITH f, came, u, seen, e[$prop] AS fv,
     CASE WHEN EXISTS { MATCH (u)-[:ABOUT|MENTIONS]->(q:Entity)
                        WHERE size(q.words) > 0 AND all(w IN q.words WHERE w IN $words) } THEN 1.0 ELSE 0.5 END AS anchor
WITH f, came, u, seen, fv, anchor, CASE WHEN fv IS NULL OR $vector IS NULL THEN null
                                  ELSE 2 * vector.similarity.cosine(fv, $vector) - 1 END AS fq
MATCH (u)-[:ABOUT|MENTIONS]->(entity:Entity) WHERE entity.name <> coalesce(came, '')
// An entity linked to more units than fanout is not walked through: which of them would be
// read is arbitrary (a chat's speaker is named in every turn).
WITH f, u, seen, fv, fq, anchor, entity, COUNT { (entity)<-[:ABOUT|MENTIONS]-() } AS linked
WHERE linked <= $fanout AND NOT (size(entity.words) > 0 AND all(w IN entity.words WHERE w IN $words))
WITH f, u, seen, fv, fq, entity, anchor * log(2) / log(1 + linked) AS specificity
CALL (entity, u, seen) {
  MATCH (entity)<-[:ABOUT|MENTIONS]-(n:Unit) WHERE n <> u AND NOT n.id IN seen
  MATCH (e:Entry {unit_id: n.id})
  WHERE e:SearchEntry AND e.scope IN $scopes AND {{include recall/entry_visible}}
    AND (size($kinds) = 0 OR e.kind IN $kinds)
  RETURN n, e LIMIT $fanout
}
WITH n, e[$prop] AS nv, collect({source: f, via: entity.name, fv: fv, fq: fq, specificity: specificity}) AS paths
WITH n, nv, paths, CASE WHEN nv IS NULL OR $vector IS NULL THEN null
                        ELSE 2 * vector.similarity.cosine(nv, $vector) - 1 END AS nq
UNWIND paths AS p
WITH n, p, CASE WHEN nq IS NULL OR p.fq IS NULL THEN null
                ELSE (p.fq + nq) / sqrt(2 + 2 * (2 * vector.similarity.cosine(p.fv, nv) - 1) + 1e-9) END AS similarity
WITH n, p, similarity, coalesce(similarity, 1.0) * p.specificity AS score
ORDER BY score DESC, p.source, p.via
WITH n, head(collect({source: p.source, via: p.via, score: score, similarity: similarity})) AS best
WITH collect(best {.*, id: n.id}) AS paths
// Two seeds that reach each other: only the better path counts (graphmem.domain.models.Step). Only a
// path's source can be reached back, so only paths to sources are compared.
WITH paths, [o IN paths WHERE o.id IN [p IN paths | p.source]] AS back
UNWIND paths AS r
WITH r, back WHERE NOT any(o IN back WHERE o.id = r.source AND o.source = r.id
                                     AND (o.score > r.score OR (o.score = r.score AND o.id < r.id)))
WITH r ORDER BY r.score DESC, r.id LIMIT $limit
RETURN collect(r) AS reached
