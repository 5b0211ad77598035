// mode: read
// params: scope
// Ids of the scope's archived units.
MATCH (u:Unit) WHERE u.scope = $scope AND u.archived_at IS NOT NULL
RETURN u.id AS id
