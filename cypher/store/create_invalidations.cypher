// mode: write
// params: rows, scope
// Invalidation edges from a decision to a unit of the same scope; the unit itself is untouched.
UNWIND $rows AS row
MATCH (d:Decision {id: row.decision_id}) WHERE d.scope = $scope
MATCH (u:Unit {id: row.unit_id}) WHERE u.scope = $scope
CREATE (d)-[:INVALIDATES {expired_at: row.expired_at, invalid_at: row.invalid_at, reason: row.reason, decision_id: row.decision_id}]->(u)
RETURN count(*) AS written
