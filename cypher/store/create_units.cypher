// mode: write
// params: rows
// Create units, link each to its episode (DERIVED) and to its subject/object entities (ABOUT),
// merging entities by their scope-derived id.
UNWIND $rows AS row
CREATE (u:Unit)
SET u = row.props
WITH u, row
OPTIONAL MATCH (ep:Episode {scope: row.props.scope, id: row.props.episode_id})
FOREACH (_ IN CASE WHEN ep IS NULL THEN [] ELSE [1] END | CREATE (ep)-[:DERIVED]->(u))
WITH u, row
UNWIND row.entities AS ent
MERGE (e:Entity {id: ent.id})
ON CREATE SET e += ent.props
CREATE (u)-[:ABOUT {role: ent.role}]->(e)
