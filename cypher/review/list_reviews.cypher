// mode: read
// params: scope, status, limit
// Review items, oldest first; of one scope or all (scope null), of one status or all.
MATCH (r:Review)
WHERE ($scope IS NULL OR r.scope = $scope) AND ($status IS NULL OR r.status = $status)
RETURN r {.*} AS review ORDER BY r.created_at, r.id LIMIT $limit
