// mode: read
// params: scope, episode_id, op, limit
// The decision log of a scope, newest first; optionally of one episode or one op.
MATCH (d:Decision) WHERE d.scope = $scope AND d.decided_at IS NOT NULL  // seeks the (scope, decided_at) index
  AND ($episode_id IS NULL OR d.episode_id = $episode_id)
  AND ($op IS NULL OR d.op = $op)
RETURN d {.*} AS decision
ORDER BY d.decided_at DESC, d.id LIMIT $limit
