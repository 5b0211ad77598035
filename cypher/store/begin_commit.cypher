// mode: write
// params: id, scope_props, committed_at
// Idempotency key of a write batch: a retried transaction whose first attempt did commit finds
// its key and stops.
MERGE (c:Commit {id: $id})
ON CREATE SET c += $scope_props, c.committed_at = $committed_at
RETURN c.committed_at = $committed_at AS fresh
