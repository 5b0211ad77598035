// mode: read
// params: vector, scope, k
// Nearest entity names within one scope (entities per scope are few: exact is cheap).
MATCH (e:Entity) WHERE e.scope = $scope AND e:SearchEntity
WITH e.id AS id, vector.similarity.cosine(e.embedding, $vector) AS score
ORDER BY score DESC LIMIT $k
RETURN id, score
