// mode: read
// params: entity_ids, scope, fanout
// Units about the given entities (the walk's start from entities named in the query),
// at most `fanout` per entity.
UNWIND $entity_ids AS eid
MATCH (e:Entity {id: eid}) WHERE e.scope = $scope
CALL {
  WITH e
  MATCH (e)<-[:ABOUT]-(n:Unit) WHERE NOT EXISTS { MATCH (s:Usage {unit_id: n.id}) WHERE s.archived_at IS NOT NULL }
  RETURN n.id AS unit_id LIMIT $fanout
}
RETURN eid AS entity, e.name AS via, collect(unit_id) AS ids
