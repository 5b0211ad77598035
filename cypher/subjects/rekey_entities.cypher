// mode: write
// params: rows
// Give entities their id under the normal scope (rows of {old, new}); where the normal scope
// already has that entity (two spellings of a subject became one), the units and episodes
// about or naming this one are moved to it and this one goes. Returns how many were merged.
UNWIND $rows AS row
MATCH (e:Entity {id: row.old})
OPTIONAL MATCH (keep:Entity {id: row.new})
CALL (e, keep) {
  MATCH (u)-[r:ABOUT]->(e) WHERE keep IS NOT NULL
  CREATE (u)-[:ABOUT {role: r.role}]->(keep)
  DELETE r
}
CALL (e, keep) {
  MATCH (n)-[r:MENTIONS]->(e) WHERE keep IS NOT NULL
  MERGE (n)-[m:MENTIONS]->(keep)
  ON CREATE SET m.kind = r.kind
  DELETE r
}
FOREACH (_ IN CASE WHEN keep IS NULL THEN [1] ELSE [] END | SET e.id = row.new)
FOREACH (_ IN CASE WHEN keep IS NULL THEN [] ELSE [1] END | DETACH DELETE e)
RETURN count(keep) AS merged
