// mode: write
// params: scope, ids
// Physically delete units of the scope and their edges (erasure and archive purge only).
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
DETACH DELETE u
RETURN count(*) AS deleted
