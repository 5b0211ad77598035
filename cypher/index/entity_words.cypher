// mode: write
// params: rows
// What derives from each entity's name (graphmem.adapters.neo4j.rows.name_props): the words of
// it, so a question names an entity when it holds every word, and its first and last word, by
// which a write's word runs find it.
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e += row.props
REMOVE e:SearchEntity, e.embedding
