// mode: read
// params: scope, after, limit
// Entities, in id order, one page after `after`, to set the words of their names.
MATCH (e:Entity)
WHERE ($scope IS NULL OR e.scope = $scope) AND e.id > $after
RETURN e.id AS id, e.name AS name
ORDER BY id LIMIT $limit
