// mode: write
// params: rows, scope
// values: label:name
// Set recomputed properties on nodes of one label and scope, by id: rows of {id, props}.
UNWIND $rows AS row
MATCH (n:{{label}} {id: row.id}) WHERE n.scope = $scope
SET n += row.props
