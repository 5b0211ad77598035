// mode: write
// params: scope, label
// Delete one block of the scope.
MATCH (b:Block {scope: $scope, label: $label})
DETACH DELETE b
RETURN count(*) AS deleted
