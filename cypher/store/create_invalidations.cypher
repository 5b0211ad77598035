// mode: write
// params: rows, scope
// Invalidation edges from a decision to a unit of the same scope; the unit itself is untouched.
// Times arrive as ISO 8601 text.
UNWIND $rows AS row
MATCH (d:Decision {id: row.decision_id}) WHERE d.scope = $scope
MATCH (u:Unit {id: row.unit_id}) WHERE u.scope = $scope
CREATE (d)-[:INVALIDATES {expired_at: datetime(row.expired_at), invalid_at: datetime(row.invalid_at), reason: row.reason, decision_id: row.decision_id}]->(u)
RETURN count(*) AS written
