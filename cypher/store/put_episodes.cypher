// mode: write
// params: rows, stored_at
// Append episodes; an existing id is left untouched and its fingerprint returned to compare.
UNWIND $rows AS row
MERGE (e:Episode {id: row.id})
ON CREATE SET e += row.props, e.stored_at = $stored_at
RETURN e.id AS id, e.fingerprint AS fingerprint, e.stored_at = $stored_at AS created
