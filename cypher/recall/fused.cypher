// mode: fragment
// params: kinds, entity_lucene, words, window, began_first, fetch, lexical_fetch, k, keep, gap, depth, pool, prop, rrf_k, tie, weights, seeds, fanout, hops, hop_decay
// The end both recall statements share, after their semantic list and the time list's
// candidates (the units near the window the question names): the time list (the fetch
// candidates most like the question, by distance from the window, an event by its start, a
// state by the gap between its interval and the window (for a question about what happened
// then, by how long before it began when it holds into it): graphmem.domain.entries.nearness; equal
// distances tie); the lexical and named-entity lists filtered right after their index calls;
// the speaker list (which of those candidates someone the question names said);
// reciprocal rank fusion (ties share a rank: scores within $tie, graphmem.domain.fusion.TIE, are one),
// the pool best re-scored by their similarity with the question, of which the depth best; up to
// three hops of a walk from them (graphmem.domain.fusion.walk); of the k best, each gaining for the
// others told in its conversation (graphmem.domain.fusion.together), the keep best units as seen at
// system time s, with the entry showing them and the path that reached them.
CALL (near) {
  UNWIND near AS n
  WITH n ORDER BY n.score DESC, n.id LIMIT $fetch
  WITH n, CASE WHEN n.event THEN (CASE WHEN n.t_from < $window[0] THEN $window[0] - n.t_from
                                       WHEN n.t_from >= $window[1] THEN n.t_from - $window[1] + 1 ELSE 0 END)
               ELSE (CASE WHEN n.t_to <= $window[0] THEN $window[0] - n.t_to + 1
                          WHEN n.t_from >= $window[1] THEN n.t_from - $window[1] + 1
                          WHEN $began_first AND n.t_from < $window[0] THEN $window[0] - n.t_from ELSE 0 END) END AS distance
  ORDER BY distance, n.score DESC, n.id
  RETURN collect({id: n.id, score: -distance}) AS timed
}
CALL (asked) {
  WITH asked.lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entry_text', q, {limit: $lexical_fetch}) YIELD node AS e, score
  WHERE {{include recall/entry_visible}} AND (size($kinds) = 0 OR e.kind IN $kinds)
  WITH e.unit_id AS id, score ORDER BY score DESC, id LIMIT $fetch
  RETURN collect({id: id, score: score}) AS lexical
}
// The entities the question's words find, once for the named-entity and the speaker lists;
// named: every word of the name is in the question.
CALL () {
  WITH $entity_lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_names', q, {limit: 50}) YIELD node, score
  RETURN collect({entity: node, score: score, named: all(w IN node.words WHERE w IN $words)}) AS named_by_words
}
CALL (named_by_words) {
  UNWIND named_by_words AS f
  WITH f, f.entity AS entity
  // An entity linked to more units than are read for it (a chat's speaker, named everywhere)
  // ranks none of them: which ones were read would be arbitrary, and they would all tie.
  WITH f, COUNT { (entity)<-[:ABOUT|MENTIONS]-() } AS linked WHERE linked <= $fanout
  WITH collect(f {.*, linked: linked}) AS found
  UNWIND (CASE WHEN any(f IN found WHERE f.named) THEN [f IN found WHERE f.named] ELSE found END)[0..$seeds] AS f
  // An entity named in many units says less about which unit is meant.
  WITH f.entity AS entity, f.score * log(2) / log(1 + f.linked) AS score
  CALL (entity) {
    MATCH (entity)<-[:ABOUT|MENTIONS]-(u:Unit)
    MATCH (e:Entry {unit_id: u.id})
    WHERE e:SearchEntry AND {{include recall/entry_visible}} AND (size($kinds) = 0 OR e.kind IN $kinds)
    RETURN DISTINCT u.id AS id
  }
  // A unit naming more of the question's entities comes first.
  WITH id, sum(score) AS score ORDER BY score DESC, id LIMIT $fetch
  RETURN collect({id: id, score: score}) AS entities
}
// The speaker list: of the candidates above, those said by someone the question names (a
// "Name: message" line's speaker), all tied. Only a named entity that speaks in the scopes (a
// speaker link among 1,000 of its links, as recall/asked reads it) is looked for in them: in a
// scope of documents, where no one speaks, the candidates are not read.
CALL (named_by_words, semantic, lexical, entities, timed) {
  UNWIND [f IN named_by_words WHERE f.named | f.entity] AS n
  WITH n WHERE 'speaker' IN COLLECT { MATCH (n)<-[r:MENTIONS]-() RETURN r.kind AS kind LIMIT 1000 }
  WITH collect(n) AS speakers WHERE size(speakers) > 0
  UNWIND semantic + lexical + entities + timed AS hit
  WITH DISTINCT hit.id AS id, speakers
  WHERE EXISTS { MATCH (:Unit {id: id})-[:MENTIONS {kind: 'speaker'}]->(n) WHERE n IN speakers }
  RETURN collect({id: id, score: 1.0}) AS said
}
UNWIND [['semantic', semantic], ['lexical', lexical], ['entities', entities], ['time', timed], ['speaker', said]] AS list
UNWIND range(0, size(list[1]) - 1) AS i
WITH asked.vector AS v, list[0] AS name, list[1] AS hits, i
// The time list's ties share their average rank (graphmem.domain.fusion.AVERAGED): a state true all
// through the named time is as near as every other, and a tie of many must not lift them all.
WITH v, hits[i].id AS id,
     coalesce($weights[name], 1.0) / ($rrf_k + 1 + size([j IN range(0, i) WHERE hits[j].score > hits[i].score + $tie])
       + CASE WHEN name = 'time' THEN (size([h IN hits WHERE h.score = hits[i].score]) - 1) / 2.0 ELSE 0 END) AS part
WITH v, id, sum(part) AS score
ORDER BY score DESC, id LIMIT $pool
// The pool's similarity with what the lists read, above the pool's lowest (graphmem.domain.fusion.similar):
// a unit's entries all carry its vector.
WITH id, score, CASE WHEN v IS NOT NULL
                     THEN vector.similarity.cosine(v, COLLECT { MATCH (e:Entry {unit_id: id}) RETURN e[$prop] AS x LIMIT 1 }[0])
                END AS sim
WITH collect({id: id, score: score, sim: sim}) AS pool, min(sim) AS lo
UNWIND pool AS p
WITH p.id AS id, p.score + coalesce($weights.similarity, 1.0) * coalesce(p.sim - lo, 0.0) AS score, p.sim AS sim
ORDER BY score DESC, id LIMIT $depth
WITH collect({id: id, score: score, sim: sim}) AS found
// The walk (graphmem.domain.fusion.walk): a hop starts from the seeds best units (the direct hits,
// then the best the previous hop reached, each with the entity it was reached through) and
// reaches units no earlier hop started from or reached; a path holds unit ids and the names
// of the entities between them.
WITH found, [x IN found[0..$k][0..$seeds] | {id: x.id, via: null}] AS seeds, [] AS seen, [] AS walked
CALL (seeds, seen) {
  WITH seeds, seen WHERE $hops >= 1
  {{include recall/walk_step}}
}
WITH found, walked + [r IN reached | r {.*, hop: 1, path: [r.source, r.via, r.id]}] AS walked,
     seen + [x IN seeds | x.id] + [r IN reached | r.id] AS seen, [r IN reached[0..$seeds] | r {.id, .via}] AS seeds
CALL (seeds, seen) {
  WITH seeds, seen WHERE $hops >= 2
  {{include recall/walk_step}}
}
WITH found, walked + [r IN reached | r {.*, hop: 2, path: head([w IN walked WHERE w.id = r.source | w.path]) + [r.via, r.id]}] AS walked,
     seen + [x IN seeds | x.id] + [r IN reached | r.id] AS seen, [r IN reached[0..$seeds] | r {.id, .via}] AS seeds
CALL (seeds, seen) {
  WITH seeds, seen WHERE $hops >= 3
  {{include recall/walk_step}}
}
WITH found, walked + [r IN reached | r {.*, hop: 3, path: head([w IN walked WHERE w.id = r.source | w.path]) + [r.via, r.id]}] AS walked
// A hop's paths count like one more fused list (ties share a rank), decayed by depth, added to
// the unit's own fused score; a unit keeps its best score.
UNWIND [d IN found[0..$k] | d {.*, hop: 0, path: []}] +
       [w IN walked | {id: w.id, hop: w.hop, path: w.path,
                       score: coalesce(head([d IN found WHERE d.id = w.id | d.score]), 0.0)
                         + $hop_decay ^ (w.hop - 1) * coalesce($weights.paths, 1.0)
                           / ($rrf_k + 1 + size([x IN walked WHERE x.hop = w.hop AND x.score > w.score + $tie]))}] AS c
WITH c ORDER BY c.score DESC, c.hop
WITH c.id AS id, head(collect(c)) AS best
ORDER BY best.score DESC, id LIMIT $k
// Conversations: in time order, a unit told less than $gap microseconds after the one before
// it is told in that one's conversation (a unit with no time is alone); each unit gains
// $weights.conversation for every other of the k told in its conversation.
// The unit found here is the one returned: it is looked up once.
MATCH (u:Unit {id: id})
WITH id, best, u, u.occurred_at.epochMillis * 1000 + u.occurred_at.microsecond % 1000 AS told
ORDER BY told, id
WITH collect({id: id, best: best, u: u, told: told}) AS rows
WITH rows, [x IN rows WHERE x.told IS NOT NULL] AS timed
WITH rows, timed, reduce(l = [], i IN range(0, size(timed) - 1) |
       l + [CASE WHEN i > 0 AND timed[i].told - timed[i - 1].told < $gap THEN l[i - 1] ELSE i END]) AS labels
UNWIND rows AS r
WITH r.id AS id, r.u AS u, r.best AS b,
     head([i IN range(0, size(timed) - 1) WHERE timed[i].id = r.id | labels[i]]) AS mine, labels
WITH id, u, b {.*, score: b.score + coalesce($weights.conversation, 0.0)
                            * CASE WHEN mine IS NULL THEN 0 ELSE size([l IN labels WHERE l = mine]) - 1 END} AS best
ORDER BY best.score DESC, id LIMIT $keep
MATCH (e:Entry {unit_id: id}) WHERE {{include recall/entry_live}}
OPTIONAL MATCH (st:Usage {unit_id: id})
RETURN best.score AS score, best.hop AS hop, best.sim AS similarity,
       [i IN range(0, size(best.path) - 1) | CASE WHEN i % 2 = 1 THEN best.path[i]
                                                   ELSE COLLECT { MATCH (p:Unit {id: best.path[i]}) RETURN p.content }[0] END] AS path,
       {{include recall/unit_fields}}
ORDER BY score DESC, id
