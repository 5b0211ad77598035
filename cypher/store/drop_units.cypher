// mode: write
// params: scope, ids
// Units a timeline re-derivation no longer draws (after an episode deletion), with their usage
// and search entries.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
CALL (u) { MATCH (x:Entry {unit_id: u.id}) DELETE x }
CALL (u) { MATCH (x:Usage {unit_id: u.id}) DELETE x }
DETACH DELETE u
RETURN count(*) AS dropped
