// mode: read
// params: scope, before
// How many assembly traces (of one scope, or of all when null) were created before a time.
MATCH (t:Trace) WHERE t.created_at < $before AND ($scope IS NULL OR t.scope = $scope)
RETURN count(t) AS traces
