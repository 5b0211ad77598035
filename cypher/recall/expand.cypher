// mode: read
// params: unit_ids, scope, fanout
// One hop of the graph walk: from units to their entities to other units about them. The
// LIMIT inside the subquery bounds the work at hub entities (no ORDER BY, so Neo4j stops
// expanding after `fanout` neighbours instead of reading all of them).
UNWIND $unit_ids AS uid
MATCH (u:Unit {id: uid})-[:ABOUT]->(e:Entity)
WHERE u.scope = $scope
CALL {
  WITH e, u
  MATCH (e)<-[:ABOUT]-(n:Unit)
  WHERE n <> u AND NOT EXISTS { MATCH (s:Usage {unit_id: n.id}) WHERE s.archived_at IS NOT NULL }
  RETURN n.id AS next LIMIT $fanout
}
RETURN uid AS source, e.name AS via, collect(next) AS next
