// mode: read
// params: scope, offset, limit
// The scope's episodes in time order, paged (re-extraction walks them). The second,
// always-true predicate lets the (scope, occurred_at) index seek, and give the order.
MATCH (e:Episode) WHERE e.scope = $scope AND e.occurred_at IS NOT NULL
RETURN e.id AS id ORDER BY e.occurred_at, e.id SKIP $offset LIMIT $limit
