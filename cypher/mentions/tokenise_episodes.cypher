// mode: write
// params: scope, token, limit
// Up to `limit` of the scope's episodes without their scope token get it; how many did. The
// always-true predicate on occurred_at lets the (scope, occurred_at) index seek.
MATCH (e:Episode) WHERE e.scope = $scope AND e.occurred_at IS NOT NULL AND e.scope_token IS NULL
WITH e LIMIT $limit
SET e.scope_token = $token
RETURN count(e) AS tokenised
