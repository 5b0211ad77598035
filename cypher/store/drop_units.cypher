// mode: write
// params: scope, ids
// Units a timeline re-derivation no longer draws (after an episode deletion), with their usage.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
OPTIONAL MATCH (s:Usage {unit_id: id})
DETACH DELETE u, s
RETURN count(*) AS dropped
