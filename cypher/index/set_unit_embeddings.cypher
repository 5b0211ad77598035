// mode: write
// params: rows
// Make units searchable: store the vector (as float32) and add the SearchUnit label.
UNWIND $rows AS row
MATCH (u:Unit {id: row.id})
CALL db.create.setNodeVectorProperty(u, 'embedding', row.embedding)
SET u:SearchUnit
RETURN count(u) AS updated
