// mode: read
// params: scope, offset, limit
// The scope's episodes in time order, paged (re-extraction walks them).
MATCH (e:Episode) WHERE e.scope = $scope
RETURN e.id AS id ORDER BY e.occurred_at, e.id SKIP $offset LIMIT $limit
