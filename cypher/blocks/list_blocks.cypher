// mode: read
// params: scope, label
// The scope's blocks (one label, or all), in label order.
MATCH (b:Block) WHERE b.scope = $scope AND ($label IS NULL OR b.label = $label)
RETURN b {.*} AS block ORDER BY b.label
