// mode: read
// params: scope
// How many units the scope holds, visible or not.
MATCH (u:Unit) WHERE u.scope = $scope AND u.created_at IS NOT NULL  // seeks the (scope, created_at) index
RETURN count(u) AS n
