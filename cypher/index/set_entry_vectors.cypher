// mode: write
// params: rows, prop
// Vectors of another embedding model, built aside on every entry of each unit while the live
// generation still serves search.
UNWIND $rows AS row
MATCH (e:Entry {unit_id: row.id})
CALL db.create.setNodeVectorProperty(e, $prop, row.vector)
RETURN count(*) AS set
