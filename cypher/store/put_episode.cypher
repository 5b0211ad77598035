// mode: write
// params: id, props, stored_at
// Append an episode; an existing id is left untouched and its fingerprint returned to compare.
MERGE (e:Episode {id: $id})
ON CREATE SET e += $props, e.stored_at = $stored_at
RETURN e.fingerprint AS fingerprint, e.stored_at = $stored_at AS created
