// mode: write
// params: ids, scope
// A write of an archived fact makes its unit searchable again.
UNWIND $ids AS id
MATCH (s:Usage {unit_id: id}) WHERE s.scope = $scope
SET s.archived_at = null
