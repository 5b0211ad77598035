// mode: write
// params: ids, scope_props, archived_at
// Mark units archived (out of search, kept in the store) or restore them (null). Archive
// state is operational, kept on the Usage node beside each unit, never on the unit.
UNWIND $ids AS id
MATCH (u:Unit {id: id}) WHERE u.scope = $scope_props.scope
MERGE (s:Usage {unit_id: id})
ON CREATE SET s += $scope_props, s.recall_count = 0
SET s.archived_at = $archived_at
RETURN count(u) AS updated
