// mode: write
// params: scope, ids
// Units a timeline re-derivation no longer draws (after an episode deletion), with their usage
// and search entries. Returns the entities they named, for mentions/forget_orphans.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
CALL (u) { MATCH (x:Entry {unit_id: u.id}) DELETE x }
CALL (u) { MATCH (x:Usage {unit_id: u.id}) DELETE x }
CALL (u) { MATCH (u)-[:ABOUT|MENTIONS]->(x:Entity) RETURN collect(x.id) AS named }
DETACH DELETE u
WITH named UNWIND named AS entity
RETURN collect(DISTINCT entity) AS entities
