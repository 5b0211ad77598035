// mode: read
// params: scope, after, limit
// Units to (re)index, in id order, one page after `after`; archived units stay out of search.
MATCH (u:Unit)
WHERE ($scope IS NULL OR u.scope = $scope) AND u.id > $after AND NOT EXISTS { MATCH (s:Usage {unit_id: u.id}) WHERE s.archived_at IS NOT NULL }
RETURN u.id AS id, u.content AS content
ORDER BY id LIMIT $limit
