// mode: read
// params: id, scope
// One episode of the scope, with the ids of the units it produced.
MATCH (e:Episode {scope: $scope, id: $id})
OPTIONAL MATCH (e)-[:DERIVED]->(u:Unit)
WITH e, u ORDER BY u.created_at, u.id
RETURN e {.id, .occurred_at, .raw, .channel, .facts} AS episode, collect(u.id) AS derived_ids
