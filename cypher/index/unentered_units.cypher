// mode: read
// Per scope, units that have no search entry at all although they were ever visible (not
// retracted from the start, with a non-empty world interval): they cannot be found.
MATCH (u:Unit)
WHERE NOT EXISTS { MATCH (e:Entry {unit_id: u.id}) }
  AND (u.valid_at IS NULL OR u.invalid_at IS NULL OR u.invalid_at > u.valid_at)
  AND NOT EXISTS { MATCH (:Decision)-[x:INVALIDATES]->(u) WHERE x.invalid_at IS NULL AND x.expired_at <= u.created_at }
RETURN u.scope AS scope, count(u) AS units
ORDER BY units DESC LIMIT 5
