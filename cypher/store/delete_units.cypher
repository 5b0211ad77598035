// mode: write
// params: scope, ids
// Physically delete units of the scope with their edges, usage and search entries (erasure).
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
CALL (u) { MATCH (x:Entry {unit_id: u.id}) DELETE x }
CALL (u) { MATCH (x:Usage {unit_id: u.id}) DELETE x }
DETACH DELETE u
RETURN count(*) AS deleted
