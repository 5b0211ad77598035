// mode: write
// params: scope, edges
// Invalidation edges a timeline re-derivation no longer draws, by unit, decision and the
// system time they were written at.
UNWIND $edges AS edge
MATCH (d:Decision {id: edge.decision_id})-[e:INVALIDATES]->(u:Unit {id: edge.unit_id})
WHERE u.scope = $scope AND e.expired_at = edge.expired_at
DELETE e
RETURN count(*) AS dropped
