// mode: write
// params: id, counts, status, at
// Add one batch's counts to the erasure record; mark it done at the end.
MATCH (r:Erasure {id: $id})
SET r += $counts, r.status = $status, r.updated_at = $at
RETURN properties(r) AS record
