// mode: read
// params: scope, id
// The timeline groups an episode's decisions and units belong to.
MATCH (e:Episode {scope: $scope, id: $id})
CALL {
  WITH e
  OPTIONAL MATCH (e)-[:DECIDED]->(d:Decision) WHERE d.ev_group IS NOT NULL
  RETURN collect(DISTINCT d.ev_group) AS decided
}
CALL {
  WITH e
  OPTIONAL MATCH (e)-[:DERIVED]->(u:Unit) WHERE u.group IS NOT NULL
  RETURN collect(DISTINCT u.group) AS derived
}
RETURN decided + derived AS groups
