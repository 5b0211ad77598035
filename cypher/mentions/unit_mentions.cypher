// mode: write
// params: rows, scope_props, at
// The entities units name (graphmem.mentions): merged by their scope-derived id and linked by
// MENTIONS (derived data, like search entries: recomputed, never exported).
UNWIND $rows AS row
MATCH (u:Unit {id: row.id}) WHERE u.scope = $scope_props.scope
UNWIND row.names AS m
MERGE (e:Entity {id: m.id})
ON CREATE SET e += $scope_props, e += m.props, e.created_at = $at
MERGE (u)-[r:MENTIONS]->(e)
ON CREATE SET r.kind = m.kind
RETURN count(r) AS linked
