// mode: read
// params: scope
// Ids of the scope's archived units.
MATCH (s:Usage) WHERE s.scope = $scope AND s.archived_at IS NOT NULL
RETURN s.unit_id AS id
