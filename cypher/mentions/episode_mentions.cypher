// mode: write
// params: rows, scope_props, at
// The entities episodes name (graphmem.mentions), as for units.
UNWIND $rows AS row
MATCH (ep:Episode {scope: $scope_props.scope, id: row.id})
UNWIND row.names AS m
MERGE (e:Entity {id: m.id})
ON CREATE SET e += $scope_props, e += m.props, e.created_at = $at
MERGE (ep)-[r:MENTIONS]->(e)
ON CREATE SET r.kind = m.kind
RETURN count(r) AS linked
