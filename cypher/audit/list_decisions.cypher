// mode: read
// params: scope, episode_id, op, unit_id, limit
// The decision log of a scope, newest first; optionally of one episode, one op, or the
// decisions that targeted or produced one unit.
MATCH (d:Decision) WHERE d.scope = $scope
  AND ($episode_id IS NULL OR d.episode_id = $episode_id)
  AND ($op IS NULL OR d.op = $op)
  AND ($unit_id IS NULL OR d.target_id = $unit_id OR d.produced_id = $unit_id
       OR EXISTS { (d)-[:INVALIDATES]->(:Unit {id: $unit_id}) })
RETURN d {.*} AS decision
ORDER BY d.decided_at DESC, d.id LIMIT $limit
