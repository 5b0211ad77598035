// mode: write
// params: rows, entities, scope_props, at
// The entities episodes name (graphmem.domain.mentions), as for units.
CALL () {
  UNWIND $entities AS ent
  MERGE (e:Entity {id: ent.id})
  ON CREATE SET e += $scope_props, e += ent.props, e.created_at = $at
}
UNWIND $rows AS row
MATCH (ep:Episode {scope: $scope_props.scope, id: row.id})
UNWIND row.names AS m
MATCH (e:Entity {id: m.id})
MERGE (ep)-[r:MENTIONS]->(e)
ON CREATE SET r.kind = m.kind
RETURN count(r) AS linked
