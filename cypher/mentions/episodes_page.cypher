// mode: read
// params: scope, after, limit
// The scope's episodes in id order, one page after `after`, with their raw text.
MATCH (e:Episode) WHERE e.scope = $scope AND e.id > $after
RETURN e.id AS id, e.raw AS text
ORDER BY id LIMIT $limit
