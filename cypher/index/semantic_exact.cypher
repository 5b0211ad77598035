// mode: read
// params: vector, scope, k
// Exact cosine over one scope's searchable units: used when the scope is small.
MATCH (u:SearchUnit) WHERE u.scope = $scope
WITH u.id AS id, vector.similarity.cosine(u.embedding, $vector) AS score
ORDER BY score DESC LIMIT $k
RETURN id, score
