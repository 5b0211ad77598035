// mode: write
// params: rows, scope
// Store assembly traces (one per assembly; many at once on import), each linked to the blocks
// it loaded and the units it recalled that are stored.
UNWIND $rows AS row
CREATE (t:Trace) SET t = row.props
WITH t, row
CALL {
  WITH t, row
  UNWIND row.resident AS bid
  MATCH (b:Block {id: bid}) WHERE b.scope = $scope
  CREATE (t)-[:RESIDENT]->(b)
}
CALL {
  WITH t, row
  UNWIND row.recalled AS r
  MATCH (u:Unit {id: r.id}) WHERE u.scope = $scope
  CREATE (t)-[:RECALLED {rank: r.rank, score: r.score}]->(u)
}
RETURN count(t) AS written
