// mode: write
// params: scope, ids
// Take units out of search (archive, erasure); the store keeps them.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
REMOVE u:SearchUnit, u.embedding
RETURN count(u) AS removed
