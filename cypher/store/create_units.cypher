// mode: write
// params: rows, entities
// Create units, link each to its episode (DERIVED) and to its subject/object entities (ABOUT,
// rows: props, about: id, role), each entity merged once by its scope-derived id first
// (entities: id, props; sorted by id, so two writers take their locks in one order). Times
// arrive as ISO 8601 text.
CALL () {
  UNWIND $entities AS ent
  MERGE (e:Entity {id: ent.id})
  ON CREATE SET e += ent.props, e.created_at = datetime(ent.props.created_at)
}
UNWIND $rows AS row
CREATE (u:Unit)
SET u = row.props, u.occurred_at = datetime(row.props.occurred_at), u.created_at = datetime(row.props.created_at),
    u.valid_at = datetime(row.props.valid_at), u.invalid_at = datetime(row.props.invalid_at)
WITH u, row
OPTIONAL MATCH (ep:Episode {scope: row.props.scope, id: row.props.episode_id})
FOREACH (_ IN CASE WHEN ep IS NULL THEN [] ELSE [1] END | CREATE (ep)-[:DERIVED]->(u))
WITH u, row
UNWIND row.about AS about
MATCH (e:Entity {id: about.id})
CREATE (u)-[:ABOUT {role: about.role}]->(e)
