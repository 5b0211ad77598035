// mode: read
// params: scope, id
// The entities an episode names (its mentions), with how.
MATCH (ep:Episode {scope: $scope, id: $id})-[r:MENTIONS]->(e:Entity)
RETURN e.name AS name, r.kind AS kind
ORDER BY name, kind
