// mode: write
// params: scope, pairs
// Invalidation edges a timeline re-derivation no longer draws, by (unit id, decision id).
UNWIND $pairs AS pair
MATCH (d:Decision {id: pair[1]})-[e:INVALIDATES]->(u:Unit {id: pair[0]})
WHERE u.scope = $scope
DELETE e
RETURN count(*) AS dropped
