// mode: read
// params: scope
// How many units the scope holds, visible or not.
MATCH (u:Unit) WHERE u.scope = $scope RETURN count(u) AS n
