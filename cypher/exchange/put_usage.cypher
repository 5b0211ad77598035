// mode: write
// params: rows, scope_props
// Imported recall statistics and archive state, beside their units (never on them).
UNWIND $rows AS row
MATCH (u:Unit {id: row.unit_id}) WHERE u.scope = $scope_props.scope
MERGE (s:Usage {unit_id: row.unit_id})
ON CREATE SET s += $scope_props
SET s.recall_count = row.recall_count, s.last_recalled_at = row.last_recalled_at, s.archived_at = row.archived_at
RETURN count(s) AS written
