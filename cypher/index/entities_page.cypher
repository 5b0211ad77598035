// mode: read
// params: scope, after, limit
// Entities, in id order, one page after `after`, to set what derives from their names.
MATCH (e:Entity)
WHERE ($scope IS NULL OR e.scope = $scope) AND e.id > $after
RETURN e.id AS id, e.name AS name, e.norm AS norm
ORDER BY id LIMIT $limit
