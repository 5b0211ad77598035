// mode: read
// params: ids, prop
// One stored vector per unit (any of its entries), to write its recomputed entries with.
UNWIND $ids AS id
MATCH (e:Entry {unit_id: id}) WHERE e[$prop] IS NOT NULL
WITH id, head(collect(e[$prop])) AS vector
RETURN id, vector
