// mode: write
// params: rows, entities, scope_props, at
// The entities units name (graphmem.domain.mentions), each merged once by its scope-derived id first
// (entities: id, props; sorted by id, so two writers take their locks in one order), then
// linked by MENTIONS from the units that name it (rows: id, names: id, kind). Derived data,
// like search entries: recomputed, never exported.
CALL () {
  UNWIND $entities AS ent
  MERGE (e:Entity {id: ent.id})
  ON CREATE SET e += $scope_props, e += ent.props, e.created_at = $at
}
UNWIND $rows AS row
MATCH (u:Unit {id: row.id}) WHERE u.scope = $scope_props.scope
UNWIND row.names AS m
MATCH (e:Entity {id: m.id})
MERGE (u)-[r:MENTIONS]->(e)
ON CREATE SET r.kind = m.kind
RETURN count(r) AS linked
