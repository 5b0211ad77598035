// mode: read
// Per scope, units that have no search entry although one is due: no edge ever changed them and
// their world interval is not empty (an entry is written with every unit, in its transaction).
MATCH (u:Unit)
WHERE NOT EXISTS { MATCH (e:Entry {unit_id: u.id}) }
  AND (u.valid_at IS NULL OR u.invalid_at IS NULL OR u.invalid_at > u.valid_at)
  AND NOT EXISTS { MATCH (:Decision)-[:INVALIDATES]->(u) }
RETURN u.scope AS scope, count(u) AS units
ORDER BY units DESC LIMIT 5
