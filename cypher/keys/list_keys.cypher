// mode: read
// Every API key, revoked ones included, oldest first.
MATCH (k:Key)
RETURN k {.*} AS key ORDER BY k.created_at, k.id
