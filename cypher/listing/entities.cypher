// mode: read
// params: scope, prefix, after, limit, known, valid
// A page of the scope's entities that something is about or names, by normalised name after
// $after and starting with $prefix (graphmem.ports.UnitStore.page_entities), read from the
// (scope, norm) index: with the facts about each visible at ($valid, $known), the other
// spellings those known at $known write it with, and when one of those was last written or
// ended (null with none).
MATCH (e:Entity)
WHERE e.scope = $scope AND e.norm STARTS WITH $prefix AND e.norm > $after
  AND EXISTS { MATCH (e)<-[:ABOUT|MENTIONS]-(:Unit|Episode) }
WITH e ORDER BY e.norm LIMIT $limit
CALL (e) {
  OPTIONAL MATCH (e)<-[r:ABOUT]-(u:Unit) WHERE u.created_at <= $known
  WITH DISTINCT u, CASE r.role WHEN 'object' THEN u.object ELSE u.subject END AS spelling
  WITH u, spelling,
       [(:Decision)-[x:INVALIDATES]->(u) WHERE x.expired_at <= $known | x] AS edges
  RETURN collect(DISTINCT spelling) AS spellings,
         count(DISTINCT CASE WHEN (u.valid_at IS NULL OR u.valid_at <= $valid)
                              AND (u.invalid_at IS NULL OR $valid < u.invalid_at)
                              AND none(x IN edges WHERE x.invalid_at IS NULL OR x.invalid_at <= $valid)
                             THEN u END) AS facts,
         max(u.created_at) AS written,
         max(reduce(last = null, x IN edges | CASE WHEN last IS NULL OR x.expired_at > last THEN x.expired_at ELSE last END))
           AS ended
}
RETURN e.id AS id, e.name AS name, [s IN spellings WHERE s <> e.name] AS aliases, facts,
       CASE WHEN ended IS NOT NULL AND ended > written THEN ended ELSE written END AS last_change
ORDER BY e.norm
