// mode: write
// params: scope, before, batch
// Delete one batch of the assembly traces (of one scope, or of all when null) created before a
// time, with their links. Run until it deletes none.
MATCH (t:Trace) WHERE t.created_at < $before AND ($scope IS NULL OR t.scope = $scope)
WITH t LIMIT $batch
DETACH DELETE t
RETURN count(*) AS deleted
