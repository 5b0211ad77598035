// mode: write
// params: id, at
// Revoke an API key; a key revoked before keeps its first revocation time.
MATCH (k:Key {id: $id})
SET k.revoked_at = coalesce(k.revoked_at, $at)
RETURN k {.*} AS key
