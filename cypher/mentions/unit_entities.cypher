// mode: read
// params: scope, id
// The entities a unit is about (its fact's subject and object) or names (its mentions).
MATCH (u:Unit {id: $id})-[r:ABOUT|MENTIONS]->(e:Entity) WHERE u.scope = $scope
RETURN e.name AS name, CASE WHEN type(r) = 'ABOUT' THEN r.role ELSE r.kind END AS kind
ORDER BY name, kind
