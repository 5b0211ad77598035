// mode: write
// params: props, resident, recalled, scope
// Store an assembly trace linked to the blocks it loaded and the units it recalled.
CREATE (t:Trace) SET t = $props
WITH t
CALL {
  WITH t
  UNWIND $resident AS bid
  MATCH (b:Block {id: bid}) WHERE b.scope = $scope
  CREATE (t)-[:RESIDENT]->(b)
}
CALL {
  WITH t
  UNWIND $recalled AS r
  MATCH (u:Unit {id: r.id}) WHERE u.scope = $scope
  CREATE (t)-[:RECALLED {rank: r.rank, score: r.score}]->(u)
}
RETURN t.id AS id
