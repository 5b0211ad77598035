// mode: read
// params: id, scope
// Invalidation edges into a unit (who stopped believing it, when, why) and out of the
// decision that produced it (what it superseded).
MATCH (u:Unit {id: $id}) WHERE u.scope = $scope
CALL {
  WITH u
  OPTIONAL MATCH (d:Decision)-[e:INVALIDATES]->(u)
  RETURN collect(CASE WHEN d IS NULL THEN null ELSE {decision_id: d.id, op: d.op, produced_id: d.produced_id,
    expired_at: e.expired_at, invalid_at: e.invalid_at, reason: e.reason} END) AS incoming
}
CALL {
  WITH u
  OPTIONAL MATCH (p:Decision)-[:PRODUCED]->(u)
  OPTIONAL MATCH (p)-[e:INVALIDATES]->(old:Unit)
  RETURN collect(CASE WHEN old IS NULL THEN null ELSE {unit_id: old.id, content: old.content,
    expired_at: e.expired_at, invalid_at: e.invalid_at, reason: e.reason} END) AS outgoing
}
RETURN incoming, outgoing
