// mode: read
// params: scope, ids
// The event decisions (timeline log entries) of the given episodes.
UNWIND $ids AS id
MATCH (:Episode {scope: $scope, id: id})-[:DECIDED]->(d:Decision) WHERE d.ev_kind IS NOT NULL
RETURN d {.*} AS decision
ORDER BY d.decided_at, d.id
