// mode: write
// params: scope, label, id, props
// Create or replace the value of the scope's block with this label (blocks are the mutable,
// resident layer); the block keeps the id it was created with.
MERGE (b:Block {scope: $scope, label: $label})
ON CREATE SET b.id = $id
SET b += $props
RETURN b.id AS id
