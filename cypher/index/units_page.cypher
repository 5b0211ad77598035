// mode: read
// params: scope, after, limit
// Units to (re)index, in id order, one page after `after`; archived units stay out of search.
MATCH (u:Unit)
WHERE ($scope IS NULL OR u.scope = $scope) AND u.id > $after AND u.archived_at IS NULL
RETURN u.id AS id, u.content AS content
ORDER BY id LIMIT $limit
