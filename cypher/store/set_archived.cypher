// mode: write
// params: ids, scope, archived_at
// Mark units archived (out of the hot indexes, kept in the store) or restore them (null).
// Archive state, like recall statistics, is operational metadata: content and times stay.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope
SET u.archived_at = $archived_at
RETURN count(u) AS updated
