// mode: read
// params: vector, fetch, scope, k
// Approximate nearest units from the HNSW index, over-fetched and then filtered to the scope
// (Neo4j 5.26 cannot filter inside the index). `fetched` tells whether the index ran dry.
CALL db.index.vector.queryNodes('unit_embedding', $fetch, $vector) YIELD node, score
WITH collect([node, score]) AS found
RETURN size(found) AS fetched,
       [pair IN found WHERE pair[0].scope = $scope | {id: pair[0].id, score: pair[1]}][0..$k] AS hits
