// mode: read
// params: scope
// The block labels a scope uses.
MATCH (b:Block {scope: $scope}) RETURN b.label AS label
