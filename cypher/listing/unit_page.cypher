// mode: fragment
// params: known, valid, kind, contains, status, before_at, before_id, limit
// The end of a unit listing (graphmem.ports.UnitStore.page_units) over candidates u of the
// scope: the cheap filters, the keyset (newest first by created_at, id, after the cursor), then
// each unit's standing at ($valid, $known) from its edges known then. The order comes before
// the standing so that the scope index's order feeds it and LIMIT stops the scan early. An edge
// without a world end closes the unit: retracted, unless its decision produced a unit of the
// same assertion (a continuation shows the fact on).
WITH u
WHERE u.created_at <= $known
  AND ($before_at IS NULL OR u.created_at < $before_at OR (u.created_at = $before_at AND u.id < $before_id))
  AND ($kind IS NULL OR u.kind = $kind)
  AND ($contains IS NULL OR toLower(u.content) CONTAINS $contains)
WITH u ORDER BY u.created_at DESC, u.id DESC
WITH u, [(d:Decision)-[e:INVALIDATES]->(u) WHERE e.expired_at <= $known |
         {expired_at: e.expired_at, invalid_at: e.invalid_at,
          continued: u.assertion_id IS NOT NULL
                     AND EXISTS { MATCH (d)-[:PRODUCED]->(c:Unit) WHERE c.assertion_id = u.assertion_id }}] AS edges
WITH u, edges,
     any(x IN edges WHERE x.invalid_at IS NULL) AS closed,
     any(x IN edges WHERE x.invalid_at IS NULL AND NOT x.continued) AS withdrawn,
     reduce(end = u.invalid_at, x IN edges |
            CASE WHEN x.invalid_at IS NOT NULL AND (end IS NULL OR x.invalid_at < end) THEN x.invalid_at ELSE end END)
       AS invalid_at
WITH u, edges, invalid_at,
     CASE WHEN NOT closed AND (u.valid_at IS NULL OR u.valid_at <= $valid)
               AND (invalid_at IS NULL OR $valid < invalid_at) THEN 'current'
          WHEN withdrawn THEN 'retracted'
          WHEN NOT closed AND invalid_at IS NOT NULL AND invalid_at <= $valid THEN 'ended' END AS status
WHERE $status IS NULL OR status = $status
WITH u, edges, invalid_at LIMIT $limit
OPTIONAL MATCH (s:Usage {unit_id: u.id})
RETURN u {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .invalid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: s.last_recalled_at, recall_count: s.recall_count} AS unit,
       reduce(first = null, x IN edges | CASE WHEN first IS NULL OR x.expired_at < first THEN x.expired_at ELSE first END)
         AS expired_at,
       invalid_at
