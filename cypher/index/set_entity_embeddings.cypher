// mode: write
// params: rows
// Make entities searchable by name: vector plus the SearchEntity label.
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
SET e:SearchEntity
RETURN count(e) AS updated
