// mode: read
// params: scope
// Searchable units of one scope, and of the whole database (from the count store).
MATCH (u:SearchUnit) WHERE u.scope = $scope
WITH count(u) AS in_scope
CALL { MATCH (n:SearchUnit) RETURN count(n) AS total }
RETURN in_scope, total
