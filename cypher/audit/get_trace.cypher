// mode: read
// params: id, scope
// One stored assembly trace of the scope.
MATCH (t:Trace {id: $id}) WHERE t.scope = $scope
RETURN t {.*} AS trace
