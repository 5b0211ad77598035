// mode: read
// params: scope, ids, hashes, slots, kind, labels, include_expired, valid, known, offset, limit
// Units of one scope matching the filter and visible at (valid = T, known = S) unless
// include_expired, with expired_at/invalid_at as seen at S. Candidates come from the most
// selective key given (ids, then hashes, then slots), else from the scope index.
CALL {
  UNWIND coalesce($ids, []) AS key MATCH (u:Unit {id: key}) RETURN u
  UNION
  UNWIND CASE WHEN $ids IS NULL THEN coalesce($hashes, []) ELSE [] END AS key
  MATCH (u:Unit {content_hash: key}) RETURN u
  UNION
  UNWIND CASE WHEN $ids IS NULL AND $hashes IS NULL THEN coalesce($slots, []) ELSE [] END AS key
  MATCH (u:Unit {slot: key}) RETURN u
  UNION
  UNWIND CASE WHEN $ids IS NULL AND $hashes IS NULL AND $slots IS NULL THEN [$scope] ELSE [] END AS key
  MATCH (u:Unit) WHERE u.scope = key RETURN u
}
// Each candidate came from the first key given, so only the later keys need testing (a list
// test per row is linear in the list: re-testing the key it came from would be quadratic).
WITH u
WHERE u.scope = $scope
  AND ($ids IS NULL OR $hashes IS NULL OR u.content_hash IN $hashes)
  AND (($ids IS NULL AND $hashes IS NULL) OR $slots IS NULL OR u.slot IN $slots)
  AND ($kind IS NULL OR u.kind = $kind)
  AND all(label IN $labels WHERE label IN u.labels)
  AND ($include_expired OR (
        u.created_at <= $known
    AND (u.valid_at IS NULL OR u.valid_at <= $valid)
    AND (u.invalid_at IS NULL OR $valid < u.invalid_at)
    AND NOT EXISTS {
      MATCH (:Decision)-[e:INVALIDATES]->(u)
      WHERE e.expired_at <= $known AND (e.invalid_at IS NULL OR e.invalid_at <= $valid)
    }))
WITH u ORDER BY u.created_at, u.id SKIP $offset LIMIT $limit
CALL {
  WITH u
  OPTIONAL MATCH (:Decision)-[e:INVALIDATES]->(u) WHERE e.expired_at <= $known
  RETURN min(e.expired_at) AS expired_at, min(e.invalid_at) AS edge_invalid_at
}
OPTIONAL MATCH (s:Usage {unit_id: u.id})
RETURN u {.id, .kind, .content, .summary, .content_hash, .episode_id, .channel, .extractor_version,
          .assertion_id, .occurred_at, .group, .created_at, .valid_at, .invalid_at, .confidence, .labels, .subject,
          .predicate, .object, .single_valued, .subject_type, .subject_id, .project_id,
          last_recalled_at: s.last_recalled_at, recall_count: s.recall_count} AS unit,
       expired_at,
       CASE WHEN u.invalid_at IS NULL THEN edge_invalid_at
            WHEN edge_invalid_at IS NULL OR u.invalid_at < edge_invalid_at THEN u.invalid_at
            ELSE edge_invalid_at END AS invalid_at
