// mode: read
// params: scope, unit_ids
// The decisions that produced, targeted or invalidated any of the given units, newest first.
UNWIND $unit_ids AS id
MATCH (d:Decision)-[:PRODUCED|TARGET|INVALIDATES]->(:Unit {id: id})
WHERE d.scope = $scope
WITH DISTINCT d
RETURN d {.*} AS decision
ORDER BY d.decided_at DESC, d.id
